//! hsasim: a software GPU behind the HSA runtime C API.
