//! HIP status codes. One table gives each code its AMD numeric value, its enumerator name
//! (for `hipGetErrorName`) and a description (for `hipGetErrorString`); the typed
//! [`HipError`] is what the runtime passes around, so `?` works everywhere and only the C
//! ABI layer ever sees a plain integer.

use std::ffi::CStr;
use std::fmt;
use std::num::NonZeroU32;

#[allow(non_camel_case_types)]
pub type hipError_t = u32;

/// A non-success HIP status.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct HipError(NonZeroU32);

pub type HipResult<T = ()> = Result<T, HipError>;

macro_rules! hip_errors {
    ($( $const:ident = $value:literal, $name:literal, $text:literal; )*) => {
        impl HipError {
            $( pub const $const: HipError = HipError(match NonZeroU32::new($value) {
                Some(v) => v,
                None => panic!("error codes are non-zero"),
            }); )*
        }
        /// (value, enumerator name, description) for every code, success included.
        const TABLE: &[(u32, &CStr, &CStr)] = &[
            (0, c"hipSuccess", c"no error"),
            $( ($value, $name, $text), )*
        ];
    };
}

hip_errors! {
    INVALID_VALUE = 1, c"hipErrorInvalidValue", c"an argument is out of range or a required pointer is null";
    OUT_OF_MEMORY = 2, c"hipErrorOutOfMemory", c"the device cannot allocate that much memory";
    NOT_INITIALIZED = 3, c"hipErrorNotInitialized", c"the HIP runtime could not be initialized";
    DEINITIALIZED = 4, c"hipErrorDeinitialized", c"the HIP runtime is shutting down";
    PROFILER_DISABLED = 5, c"hipErrorProfilerDisabled", c"profiler is disabled";
    PROFILER_NOT_INITIALIZED = 6, c"hipErrorProfilerNotInitialized", c"profiler is not initialized";
    PROFILER_ALREADY_STARTED = 7, c"hipErrorProfilerAlreadyStarted", c"profiler already started";
    PROFILER_ALREADY_STOPPED = 8, c"hipErrorProfilerAlreadyStopped", c"profiler already stopped";
    INVALID_CONFIGURATION = 9, c"hipErrorInvalidConfiguration", c"the launch configuration (grid, block or shared memory) is invalid";
    INVALID_PITCH_VALUE = 12, c"hipErrorInvalidPitchValue", c"invalid pitch";
    INVALID_SYMBOL = 13, c"hipErrorInvalidSymbol", c"the symbol is not known to the runtime";
    INVALID_DEVICE_POINTER = 17, c"hipErrorInvalidDevicePointer", c"the pointer is not a valid device pointer";
    INVALID_MEMCPY_DIRECTION = 21, c"hipErrorInvalidMemcpyDirection", c"the copy kind is invalid";
    INSUFFICIENT_DRIVER = 35, c"hipErrorInsufficientDriver", c"the HSA runtime is too old for this call";
    MISSING_CONFIGURATION = 52, c"hipErrorMissingConfiguration", c"a kernel launch has no call configuration";
    PRIOR_LAUNCH_FAILURE = 53, c"hipErrorPriorLaunchFailure", c"an earlier launch failed";
    INVALID_DEVICE_FUNCTION = 98, c"hipErrorInvalidDeviceFunction", c"the function is not a registered device kernel";
    NO_DEVICE = 100, c"hipErrorNoDevice", c"no HIP-capable device is available";
    INVALID_DEVICE = 101, c"hipErrorInvalidDevice", c"the device ordinal is out of range";
    INVALID_IMAGE = 200, c"hipErrorInvalidImage", c"the code object is malformed";
    INVALID_CONTEXT = 201, c"hipErrorInvalidContext", c"invalid context";
    CONTEXT_ALREADY_CURRENT = 202, c"hipErrorContextAlreadyCurrent", c"context is already current";
    MAP_FAILED = 205, c"hipErrorMapFailed", c"mapping failed";
    UNMAP_FAILED = 206, c"hipErrorUnmapFailed", c"unmapping failed";
    ARRAY_IS_MAPPED = 207, c"hipErrorArrayIsMapped", c"array is mapped";
    ALREADY_MAPPED = 208, c"hipErrorAlreadyMapped", c"already mapped";
    NO_BINARY_FOR_GPU = 209, c"hipErrorNoBinaryForGpu", c"the program has no code object for this device's ISA";
    ALREADY_ACQUIRED = 210, c"hipErrorAlreadyAcquired", c"already acquired";
    NOT_MAPPED = 211, c"hipErrorNotMapped", c"not mapped";
    NOT_MAPPED_AS_ARRAY = 212, c"hipErrorNotMappedAsArray", c"not mapped as an array";
    NOT_MAPPED_AS_POINTER = 213, c"hipErrorNotMappedAsPointer", c"not mapped as a pointer";
    ECC_NOT_CORRECTABLE = 214, c"hipErrorECCNotCorrectable", c"uncorrectable ECC error";
    UNSUPPORTED_LIMIT = 215, c"hipErrorUnsupportedLimit", c"the limit is not supported";
    CONTEXT_ALREADY_IN_USE = 216, c"hipErrorContextAlreadyInUse", c"context already in use";
    PEER_ACCESS_UNSUPPORTED = 217, c"hipErrorPeerAccessUnsupported", c"peer access is not supported";
    INVALID_KERNEL_FILE = 218, c"hipErrorInvalidKernelFile", c"the kernel file is invalid";
    INVALID_GRAPHICS_CONTEXT = 219, c"hipErrorInvalidGraphicsContext", c"invalid graphics context";
    INVALID_SOURCE = 300, c"hipErrorInvalidSource", c"invalid source";
    FILE_NOT_FOUND = 301, c"hipErrorFileNotFound", c"file not found";
    SHARED_OBJECT_SYMBOL_NOT_FOUND = 302, c"hipErrorSharedObjectSymbolNotFound", c"shared object symbol not found";
    SHARED_OBJECT_INIT_FAILED = 303, c"hipErrorSharedObjectInitFailed", c"shared object initialization failed";
    OPERATING_SYSTEM = 304, c"hipErrorOperatingSystem", c"an operating system call failed";
    INVALID_HANDLE = 400, c"hipErrorInvalidHandle", c"the handle is invalid or was destroyed";
    ILLEGAL_STATE = 401, c"hipErrorIllegalState", c"the operation is not allowed in the current state";
    NOT_FOUND = 500, c"hipErrorNotFound", c"the named symbol was not found";
    NOT_READY = 600, c"hipErrorNotReady", c"the asynchronous work has not completed yet";
    ILLEGAL_ADDRESS = 700, c"hipErrorIllegalAddress", c"a kernel accessed memory it may not access";
    LAUNCH_OUT_OF_RESOURCES = 701, c"hipErrorLaunchOutOfResources", c"the launch needs more resources than the device has";
    LAUNCH_TIME_OUT = 702, c"hipErrorLaunchTimeOut", c"the kernel timed out";
    PEER_ACCESS_ALREADY_ENABLED = 704, c"hipErrorPeerAccessAlreadyEnabled", c"peer access is already enabled";
    PEER_ACCESS_NOT_ENABLED = 705, c"hipErrorPeerAccessNotEnabled", c"peer access is not enabled";
    SET_ON_ACTIVE_PROCESS = 708, c"hipErrorSetOnActiveProcess", c"cannot set while the device is active";
    CONTEXT_IS_DESTROYED = 709, c"hipErrorContextIsDestroyed", c"context is destroyed";
    ASSERT = 710, c"hipErrorAssert", c"a device-side assert failed";
    HOST_MEMORY_ALREADY_REGISTERED = 712, c"hipErrorHostMemoryAlreadyRegistered", c"host memory is already registered";
    HOST_MEMORY_NOT_REGISTERED = 713, c"hipErrorHostMemoryNotRegistered", c"host memory is not registered";
    LAUNCH_FAILURE = 719, c"hipErrorLaunchFailure", c"a kernel failed on the device";
    COOPERATIVE_LAUNCH_TOO_LARGE = 720, c"hipErrorCooperativeLaunchTooLarge", c"too many blocks for a cooperative launch";
    // CUDA's cudaErrorNotPermitted. AMD's headers up to ROCm 6 have no such enumerator and
    // their runtime blocks forever where hipshim returns it (a wait inside a stream callback
    // for that callback); every ABI profile gets the same value, a program built for ROCm 5
    // or 6 sees an error it can print (hipGetErrorName) instead of a hang.
    NOT_PERMITTED = 800, c"hipErrorNotPermitted", c"the operation is not permitted here: a stream callback may not wait for its own stream or device";
    NOT_SUPPORTED = 801, c"hipErrorNotSupported", c"this HIP function is not supported by hipshim yet";
    STREAM_CAPTURE_UNSUPPORTED = 900, c"hipErrorStreamCaptureUnsupported", c"not permitted while capturing";
    STREAM_CAPTURE_INVALIDATED = 901, c"hipErrorStreamCaptureInvalidated", c"stream capture invalidated";
    STREAM_CAPTURE_MERGE = 902, c"hipErrorStreamCaptureMerge", c"stream capture merge not permitted";
    STREAM_CAPTURE_UNMATCHED = 903, c"hipErrorStreamCaptureUnmatched", c"stream capture unmatched";
    STREAM_CAPTURE_UNJOINED = 904, c"hipErrorStreamCaptureUnjoined", c"stream capture unjoined";
    STREAM_CAPTURE_ISOLATION = 905, c"hipErrorStreamCaptureIsolation", c"stream capture isolation violated";
    STREAM_CAPTURE_IMPLICIT = 906, c"hipErrorStreamCaptureImplicit", c"implicit stream in capture";
    CAPTURED_EVENT = 907, c"hipErrorCapturedEvent", c"the event was captured";
    STREAM_CAPTURE_WRONG_THREAD = 908, c"hipErrorStreamCaptureWrongThread", c"capture started on another thread";
    GRAPH_EXEC_UPDATE_FAILURE = 910, c"hipErrorGraphExecUpdateFailure", c"graph update failed";
    INVALID_CHANNEL_DESCRIPTOR = 911, c"hipErrorInvalidChannelDescriptor", c"invalid channel descriptor";
    INVALID_TEXTURE = 912, c"hipErrorInvalidTexture", c"invalid texture";
    UNKNOWN = 999, c"hipErrorUnknown", c"unknown error";
    RUNTIME_MEMORY = 1052, c"hipErrorRuntimeMemory", c"the HSA runtime failed to allocate memory";
    RUNTIME_OTHER = 1053, c"hipErrorRuntimeOther", c"the HSA runtime reported an error";
}

impl HipError {
    /// The value the C ABI returns.
    pub fn code(self) -> hipError_t {
        self.0.get()
    }

    /// Enumerator name of a raw code, `None` for values HIP does not define.
    pub fn name_of(code: hipError_t) -> Option<&'static CStr> {
        TABLE.iter().find(|e| e.0 == code).map(|e| e.1)
    }

    /// Description of a raw code, `None` for values HIP does not define.
    pub fn description_of(code: hipError_t) -> Option<&'static CStr> {
        TABLE.iter().find(|e| e.0 == code).map(|e| e.2)
    }

    /// Every defined code, success included (for tests and tools).
    pub fn all_codes() -> impl Iterator<Item = hipError_t> {
        TABLE.iter().map(|e| e.0)
    }
}

/// Converts a `Result` into the C ABI value.
pub fn to_code(result: HipResult) -> hipError_t {
    match result {
        Ok(()) => 0,
        Err(e) => e.code(),
    }
}

impl fmt::Debug for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match Self::name_of(self.code()) {
            Some(name) => write!(f, "{}({})", name.to_string_lossy(), self.code()),
            None => write!(f, "hipError({})", self.code()),
        }
    }
}

impl fmt::Display for HipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_amd_values() {
        assert_eq!(HipError::INVALID_VALUE.code(), 1);
        assert_eq!(HipError::NO_BINARY_FOR_GPU.code(), 209);
        assert_eq!(HipError::INVALID_HANDLE.code(), 400);
        assert_eq!(HipError::LAUNCH_FAILURE.code(), 719);
        assert_eq!(HipError::NOT_SUPPORTED.code(), 801);
    }

    /// The header's enum and this table must list the same values: every enumerator of
    /// hip_error.h has a name here (so hipGetErrorName never falls back for a real code).
    #[test]
    fn every_value_of_the_header_has_a_name() {
        let header = include_str!("../hip_headers/hip/hipshim/hip_error.h");
        for line in header.lines() {
            let line = line.trim();
            let Some((_, value)) = line.split_once(" = ") else {
                continue;
            };
            let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(code) = digits.parse::<u32>() {
                assert!(
                    HipError::name_of(code).is_some(),
                    "hip_error.h value {code} ({line}) has no name"
                );
            }
        }
    }

    #[test]
    fn every_code_has_a_unique_name_and_a_description() {
        let mut seen = std::collections::HashSet::new();
        for code in HipError::all_codes() {
            assert!(seen.insert(code), "duplicate code {code}");
            assert!(HipError::name_of(code).is_some());
            assert!(!HipError::description_of(code).unwrap().is_empty());
        }
        assert!(HipError::name_of(12345).is_none());
    }
}
