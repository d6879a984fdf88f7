//! One error type for the whole runtime: a non-zero HSA status, so `?` works everywhere and
//! the C side still sees a plain `hsa_status_t`.

use hsa_abi::{hsa_status_t, status};
use std::num::NonZeroU32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct HsaError(NonZeroU32);

pub type HsaResult<T = ()> = Result<T, HsaError>;

impl HsaError {
    /// Builds an error from a failing status; `SUCCESS` and `INFO_BREAK` are not errors and
    /// map to the generic `ERROR` so a caller bug cannot turn into a silent success.
    pub const fn new(code: hsa_status_t) -> Self {
        match NonZeroU32::new(code) {
            Some(nz) if code != status::INFO_BREAK => HsaError(nz),
            _ => HsaError(match NonZeroU32::new(status::ERROR) {
                Some(nz) => nz,
                None => unreachable_nonzero(),
            }),
        }
    }
    pub const fn status(self) -> hsa_status_t {
        self.0.get()
    }

    pub const GENERIC: Self = Self::new(status::ERROR);
    pub const INVALID_ARGUMENT: Self = Self::new(status::ERROR_INVALID_ARGUMENT);
    pub const INVALID_AGENT: Self = Self::new(status::ERROR_INVALID_AGENT);
    pub const INVALID_SIGNAL: Self = Self::new(status::ERROR_INVALID_SIGNAL);
    pub const INVALID_QUEUE: Self = Self::new(status::ERROR_INVALID_QUEUE);
    pub const INVALID_ALLOCATION: Self = Self::new(status::ERROR_INVALID_ALLOCATION);
    pub const OUT_OF_RESOURCES: Self = Self::new(status::ERROR_OUT_OF_RESOURCES);
    pub const NOT_INITIALIZED: Self = Self::new(status::ERROR_NOT_INITIALIZED);
    pub const INVALID_ISA: Self = Self::new(status::ERROR_INVALID_ISA);
    pub const INVALID_CODE_OBJECT: Self = Self::new(status::ERROR_INVALID_CODE_OBJECT);
    pub const INVALID_EXECUTABLE: Self = Self::new(status::ERROR_INVALID_EXECUTABLE);
    pub const FROZEN_EXECUTABLE: Self = Self::new(status::ERROR_FROZEN_EXECUTABLE);
    pub const INVALID_SYMBOL_NAME: Self = Self::new(status::ERROR_INVALID_SYMBOL_NAME);
    pub const VARIABLE_ALREADY_DEFINED: Self = Self::new(status::ERROR_VARIABLE_ALREADY_DEFINED);
    pub const VARIABLE_UNDEFINED: Self = Self::new(status::ERROR_VARIABLE_UNDEFINED);
    pub const INVALID_EXECUTABLE_SYMBOL: Self = Self::new(status::ERROR_INVALID_EXECUTABLE_SYMBOL);
    pub const INVALID_CODE_OBJECT_READER: Self =
        Self::new(status::ERROR_INVALID_CODE_OBJECT_READER);
    pub const INVALID_FILE: Self = Self::new(status::ERROR_INVALID_FILE);
    pub const INVALID_ISA_NAME: Self = Self::new(status::ERROR_INVALID_ISA_NAME);
    pub const REFCOUNT_OVERFLOW: Self = Self::new(status::ERROR_REFCOUNT_OVERFLOW);
    pub const INVALID_RUNTIME_STATE: Self = Self::new(status::ERROR_INVALID_RUNTIME_STATE);
}

/// Runs `f`, turning a panic into its message. Service threads (packet processors, copy
/// engines, async handlers) and the work they run on waiting threads use it, so that an
/// internal bug fails one packet or copy instead of killing the thread, and with it every
/// queue or copy waiting behind it.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| hsasim_isa::panic_message(payload.as_ref()).to_owned())
}

const fn unreachable_nonzero() -> NonZeroU32 {
    panic!("status::ERROR is non-zero")
}

/// `hsa_status_string` text for every status ROCr defines (HSA core plus the AMD extension
/// codes), worded after the descriptions in `hsa.h` / `hsa_ext_amd.h`.
pub fn status_text(code: hsa_status_t) -> Option<&'static str> {
    use status::*;
    Some(match code {
        SUCCESS => "HSA_STATUS_SUCCESS: The function has been executed successfully.",
        INFO_BREAK => "HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before reaching the end of the list.",
        ERROR => "HSA_STATUS_ERROR: A generic error has occurred.",
        ERROR_INVALID_ARGUMENT => "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.",
        ERROR_INVALID_QUEUE_CREATION => "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.",
        ERROR_INVALID_ALLOCATION => "HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
        ERROR_INVALID_AGENT => "HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
        ERROR_INVALID_REGION => "HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.",
        ERROR_INVALID_SIGNAL => "HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.",
        ERROR_INVALID_QUEUE => "HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
        ERROR_OUT_OF_RESOURCES => "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
        ERROR_INVALID_PACKET_FORMAT => "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.",
        ERROR_RESOURCE_FREE => "HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.",
        ERROR_NOT_INITIALIZED => "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero.",
        ERROR_REFCOUNT_OVERFLOW => "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached.",
        ERROR_INCOMPATIBLE_ARGUMENTS => "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a function are not compatible.",
        ERROR_INVALID_INDEX => "HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
        ERROR_INVALID_ISA => "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
        ERROR_INVALID_CODE_OBJECT => "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.",
        ERROR_INVALID_EXECUTABLE => "HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.",
        ERROR_FROZEN_EXECUTABLE => "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.",
        ERROR_INVALID_SYMBOL_NAME => "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.",
        ERROR_VARIABLE_ALREADY_DEFINED => "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.",
        ERROR_VARIABLE_UNDEFINED => "HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.",
        ERROR_EXCEPTION => "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.",
        ERROR_INVALID_ISA_NAME => "HSA_STATUS_ERROR_INVALID_ISA_NAME: The ISA name is invalid.",
        ERROR_INVALID_CODE_SYMBOL => "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.",
        ERROR_INVALID_EXECUTABLE_SYMBOL => "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.",
        ERROR_INVALID_FILE => "HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
        ERROR_INVALID_CODE_OBJECT_READER => "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.",
        ERROR_INVALID_CACHE => "HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.",
        ERROR_INVALID_WAVEFRONT => "HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.",
        ERROR_INVALID_SIGNAL_GROUP => "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.",
        ERROR_INVALID_RUNTIME_STATE => "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configured state.",
        ERROR_FATAL => "HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.",
        AMD_ERROR_MEMORY_APERTURE_VIOLATION => "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The memory access was outside any valid aperture (a GPU memory access fault).",
        AMD_ERROR_ILLEGAL_INSTRUCTION => "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: A wave executed an illegal or unimplemented instruction.",
        AMD_ERROR_MEMORY_FAULT => "HSA_STATUS_ERROR_MEMORY_FAULT: A wave faulted on a memory access (page fault).",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_is_never_an_error_value() {
        assert_eq!(HsaError::new(status::SUCCESS).status(), status::ERROR);
        assert_eq!(HsaError::new(status::INFO_BREAK).status(), status::ERROR);
        assert_eq!(HsaError::INVALID_SIGNAL.status(), 0x1006);
    }

    #[test]
    fn every_status_has_text() {
        for code in (0x1000..=0x1026).chain([0, 1, 0x29, 0x2a, 0x2b]) {
            if (0x101a..=0x101f).contains(&code) {
                continue; // gap in hsa.h
            }
            assert!(status_text(code).is_some(), "{code:#x}");
        }
    }
}
