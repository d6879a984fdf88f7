//! hipshim: a HIP runtime (`libamdhip64.so`) that owns its AQL queues.
