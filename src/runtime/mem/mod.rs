//! Memory: the registry of every address range the runtime knows and allocation
//! (`memory`), stream-ordered pools (`mempool`), virtual memory management (`vmm`),
//! inter-process memory (`ipc`), `__managed__` variables (`managed_var`) and the access one
//! device has to another's memory (`peer`). Built on the devices; streams and copies build
//! on it.

pub mod ipc;
pub mod managed_var;
pub mod memory;
pub mod mempool;
pub mod peer;
pub mod vmm;
