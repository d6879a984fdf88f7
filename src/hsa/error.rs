//! What an HSA failure is, and the one table that says which HIP error the runtime reports it
//! as: [`From<HsaError> for HipError`](HsaError), so `?` carries an HSA failure straight into a
//! `HipResult`.
//!
//! Two kinds of failure share the type and must not share a mapping: an HSA *call* returning
//! an error status (the runtime could not do what the program asked), and a *fault*, a packet
//! that failed on the device and that its queue's error callback reported (what the program's
//! kernel did). The same status means different things to HIP in the two cases.

use crate::error::HipError;
use hsa_abi::*;

/// An HSA call failed, or a queue reported a fault: which, and with what status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsaError {
    /// The call that returned `status`; for a fault, [`HsaError::FAULT`].
    pub call: &'static str,
    pub status: hsa_status_t,
    /// Whether `status` is a fault a queue reported (see the module comment).
    pub fault: bool,
}

impl HsaError {
    /// What [`HsaError::call`] says for a fault.
    pub const FAULT: &'static str = "a packet on the device";

    /// `call` returned the error `status`.
    pub fn call(call: &'static str, status: hsa_status_t) -> HsaError {
        HsaError {
            call,
            status,
            fault: false,
        }
    }

    /// A queue's error callback reported `status` for a packet that failed on the device.
    pub fn fault(status: hsa_status_t) -> HsaError {
        HsaError {
            call: Self::FAULT,
            status,
            fault: true,
        }
    }
}

impl std::fmt::Display for HsaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed with status {:#x}", self.call, self.status)
    }
}

/// Turns an HSA status into a `Result` that names the call.
pub fn check(call: &'static str, status: hsa_status_t) -> Result<(), HsaError> {
    if status == status::SUCCESS || status == status::INFO_BREAK {
        Ok(())
    } else {
        Err(HsaError::call(call, status))
    }
}

/// The HIP error for an HSA failure, without side effects (the table the tests read).
fn hip_error_of(error: &HsaError) -> HipError {
    if error.fault {
        return match error.status {
            // The kernel touched memory it may not: CUDA's "illegal address".
            status::AMD_ERROR_MEMORY_APERTURE_VIOLATION | status::AMD_ERROR_MEMORY_FAULT => {
                HipError::ILLEGAL_ADDRESS
            }
            // An illegal instruction, a trap, anything else the packet processor stopped at.
            _ => HipError::LAUNCH_FAILURE,
        };
    }
    match error.status {
        // Only the loader returns these: the code object (or its ISA) is unusable.
        status::ERROR_INVALID_ISA | status::ERROR_INVALID_CODE_OBJECT => HipError::INVALID_IMAGE,
        status::ERROR_OUT_OF_RESOURCES => HipError::OUT_OF_MEMORY,
        // The rest the runtime cannot attribute to the caller's arguments.
        _ => HipError::RUNTIME_OTHER,
    }
}

impl From<HsaError> for HipError {
    /// The HIP error an HSA failure is reported as (see [`hip_error_of`]). A failed call that
    /// is not the program's doing is logged here, once, as it reaches HIP; faults are logged
    /// by the stream that finds them, a bad code object by the loader.
    fn from(error: HsaError) -> HipError {
        let hip = hip_error_of(&error);
        if !error.fault && hip != HipError::INVALID_IMAGE {
            tracing::error!(%error, "HSA call failed");
        }
        hip
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_faults_are_illegal_addresses_and_other_faults_launch_failures() {
        let fault = |s| HipError::from(HsaError::fault(s));
        assert_eq!(
            fault(status::AMD_ERROR_MEMORY_APERTURE_VIOLATION),
            HipError::ILLEGAL_ADDRESS
        );
        assert_eq!(
            fault(status::AMD_ERROR_MEMORY_FAULT),
            HipError::ILLEGAL_ADDRESS
        );
        assert_eq!(
            fault(status::AMD_ERROR_ILLEGAL_INSTRUCTION),
            HipError::LAUNCH_FAILURE
        );
        assert_eq!(fault(status::ERROR_EXCEPTION), HipError::LAUNCH_FAILURE);
        assert_eq!(fault(status::ERROR), HipError::LAUNCH_FAILURE);
        // A fault is the kernel's doing even when its status reads like a call's.
        assert_eq!(
            fault(status::ERROR_OUT_OF_RESOURCES),
            HipError::LAUNCH_FAILURE
        );
        assert_eq!(
            fault(status::ERROR_INVALID_CODE_OBJECT),
            HipError::LAUNCH_FAILURE
        );
    }

    #[test]
    fn failed_calls_map_by_status() {
        let call = |s| HipError::from(HsaError::call("hsa_test_call", s));
        assert_eq!(
            call(status::ERROR_OUT_OF_RESOURCES),
            HipError::OUT_OF_MEMORY
        );
        assert_eq!(call(status::ERROR_INVALID_ISA), HipError::INVALID_IMAGE);
        assert_eq!(
            call(status::ERROR_INVALID_CODE_OBJECT),
            HipError::INVALID_IMAGE
        );
        // Not the program's doing as far as the runtime can tell, however the status reads.
        assert_eq!(call(status::ERROR), HipError::RUNTIME_OTHER);
        assert_eq!(
            call(status::ERROR_INVALID_ARGUMENT),
            HipError::RUNTIME_OTHER
        );
        assert_eq!(
            call(status::ERROR_INVALID_ALLOCATION),
            HipError::RUNTIME_OTHER
        );
        assert_eq!(
            call(status::AMD_ERROR_MEMORY_FAULT),
            HipError::RUNTIME_OTHER
        );
    }

    #[test]
    fn check_passes_success_and_break_and_names_the_failed_call() {
        assert_eq!(check("x", status::SUCCESS), Ok(()));
        assert_eq!(check("x", status::INFO_BREAK), Ok(()));
        let error = check("hsa_x", status::ERROR).unwrap_err();
        assert_eq!(error, HsaError::call("hsa_x", status::ERROR));
        assert!(!error.fault);
        assert_eq!(error.to_string(), "hsa_x failed with status 0x1000");
    }

    #[test]
    fn question_mark_converts() {
        fn runtime_call() -> crate::error::HipResult {
            check("hsa_y", status::ERROR_OUT_OF_RESOURCES)?;
            Ok(())
        }
        assert_eq!(runtime_call(), Err(HipError::OUT_OF_MEMORY));
    }
}
