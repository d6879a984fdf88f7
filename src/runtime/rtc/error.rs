//! hiprtc's results: `hiprtcResult` ([`RtcError`]), a code space of its own, and the names
//! `hiprtcGetErrorString` gives them.

use crate::error::HipError;
use std::ffi::CStr;

/// A failed hiprtc call: AMD's `hiprtcResult` values (ROCm 5.2's list, plus
/// `HIPRTC_ERROR_LINKING` = 100 as ROCm 6's header numbers it; ROCm 5.3-5.7 numbered it 7 and
/// shifted the rest, which ROCm 6 undid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RtcError {
    OutOfMemory = 1,
    ProgramCreationFailure = 2,
    InvalidInput = 3,
    InvalidProgram = 4,
    InvalidOption = 5,
    Compilation = 6,
    BuiltinOperationFailure = 7,
    NoNameExpressionsAfterCompilation = 8,
    NoLoweredNamesBeforeCompilation = 9,
    NameExpressionNotValid = 10,
    InternalError = 11,
    Linking = 100,
}

pub type RtcResult<T = ()> = Result<T, RtcError>;

/// Every `hiprtcResult` with the name `hiprtcGetErrorString` gives it (AMD returns the
/// enumerator's name).
const RESULT_NAMES: &[(u32, &CStr)] = &[
    (0, c"HIPRTC_SUCCESS"),
    (1, c"HIPRTC_ERROR_OUT_OF_MEMORY"),
    (2, c"HIPRTC_ERROR_PROGRAM_CREATION_FAILURE"),
    (3, c"HIPRTC_ERROR_INVALID_INPUT"),
    (4, c"HIPRTC_ERROR_INVALID_PROGRAM"),
    (5, c"HIPRTC_ERROR_INVALID_OPTION"),
    (6, c"HIPRTC_ERROR_COMPILATION"),
    (7, c"HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE"),
    (8, c"HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION"),
    (9, c"HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION"),
    (10, c"HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID"),
    (11, c"HIPRTC_ERROR_INTERNAL_ERROR"),
    (100, c"HIPRTC_ERROR_LINKING"),
];

/// `hiprtcGetErrorString`: the result's name; AMD's text for a value it does not define.
pub fn result_name(code: u32) -> &'static CStr {
    RESULT_NAMES
        .iter()
        .find(|(value, _)| *value == code)
        .map_or(c"Invalid HIPRTC error code", |(_, name)| name)
}

impl RtcError {
    pub fn code(self) -> u32 {
        self as u32
    }
}

/// The argument checks shared with the HIP shells report `hipError_t`s: a bad handle is a
/// bad program, anything else bad input.
impl From<HipError> for RtcError {
    fn from(error: HipError) -> Self {
        match error {
            HipError::INVALID_HANDLE => RtcError::InvalidProgram,
            HipError::OUT_OF_MEMORY => RtcError::OutOfMemory,
            _ => RtcError::InvalidInput,
        }
    }
}
