//! hiprtc: runtime compilation of HIP source into code objects that `hipModuleLoadData`
//! takes, and linking of LLVM bitcode into one (`link.rs`, for `hiprtcLink*` and the module
//! API's `hipLink*`).
//!
//! hipshim has no compiler of its own: it runs one found at run time (`toolchain.rs`: clang
//! from the system, with hipshim's own HIP headers and the ROCm device libraries) as a child
//! process, in a private work directory per compilation. The compiler's diagnostics are the
//! program log. With no compiler installed, compilation fails with
//! `HIPRTC_ERROR_COMPILATION` and a log that says what is missing and how to install it.
//!
//! Name expressions (`hiprtcAddNameExpression("&kern<int>")`) become generated device
//! variables holding each expression's address; after compiling, the code object's
//! relocations say which symbol each one points at, which is the lowered name (`names.rs`).
//!
//! The calls return `hiprtcResult` ([`RtcError`]), a code space of its own, and leave the
//! HIP runtime's last error alone, as AMD's hiprtc does.

mod error;
mod link;
mod names;
mod toolchain;

use crate::runtime::base::handles::HandleTable;
use parking_lot::Mutex;
use std::ffi::CString;
use std::sync::Arc;

pub use error::{result_name, RtcError, RtcResult};
pub use link::{
    hip_link_check_input_type, hip_link_check_options, hip_link_create, hip_link_destroy,
    hip_link_state, link_create, link_destroy, link_state, HipLinkState, LinkState,
    JIT_IR_TO_ISA_OPT_COUNT_EXT, JIT_IR_TO_ISA_OPT_EXT,
};
pub use toolchain::{Compiler, CurrentArch, NoCompiler};

// ---- Programs --------------------------------------------------------------------------

/// A `hiprtcProgram`: the source and headers given at creation, and what compiling made.
pub struct Program {
    source: String,
    /// The file name the source is compiled under (and the log names).
    file_name: String,
    /// (include name, contents): written beside the source.
    headers: Vec<(String, String)>,
    state: Mutex<ProgramState>,
}

#[derive(Default)]
struct ProgramState {
    /// In the order added, each once.
    name_expressions: Vec<String>,
    /// The log of the latest compilation.
    log: String,
    compiled: Option<Compiled>,
}

/// The result of a successful compilation.
struct Compiled {
    /// A code object (the default), or LLVM bitcode (`-fgpu-rdc`).
    output: Output,
    /// (name expression, lowered name); the strings live as long as the program, as
    /// `hiprtcGetLoweredName` promises.
    lowered: Vec<(String, CString)>,
}

enum Output {
    CodeObject(Vec<u8>),
    Bitcode(Vec<u8>),
}

static PROGRAMS: HandleTable<Program> = HandleTable::new("hiprtc program", 0xc0);

/// `hiprtcCreateProgram`. `name` is the file name the source is compiled (and diagnosed)
/// under; a name with a directory in it, or none, is replaced by a plain one.
pub fn create_program(
    source: String,
    name: Option<&str>,
    headers: Vec<(String, String)>,
) -> RtcResult<usize> {
    for (include_name, _) in &headers {
        if !toolchain::is_relative_path_inside(include_name) {
            tracing::warn!(
                include_name,
                "hiprtcCreateProgram: an include name must be a relative path without `..`"
            );
            return Err(RtcError::InvalidInput);
        }
    }
    let file_name = match name {
        Some(name) if toolchain::is_plain_file_name(name) => name.to_owned(),
        _ => "hiprtc_program.hip".to_owned(),
    };
    Ok(PROGRAMS.insert(Arc::new(Program {
        source,
        file_name,
        headers,
        state: Mutex::new(ProgramState::default()),
    })))
}

/// The live program a `hiprtcProgram` names.
pub fn program(handle: usize) -> RtcResult<Arc<Program>> {
    PROGRAMS.get(handle).map_err(|_| RtcError::InvalidProgram)
}

/// `hiprtcDestroyProgram`: the lowered names and the code die with it.
pub fn destroy_program(handle: usize) -> RtcResult {
    PROGRAMS
        .remove(handle)
        .map(drop)
        .map_err(|_| RtcError::InvalidProgram)
}

impl Program {
    /// `hiprtcAddNameExpression`: only before compiling.
    pub fn add_name_expression(&self, expression: &str) -> RtcResult {
        let mut state = self.state.lock();
        if state.compiled.is_some() {
            return Err(RtcError::NoNameExpressionsAfterCompilation);
        }
        if !state.name_expressions.iter().any(|e| e == expression) {
            state.name_expressions.push(expression.to_owned());
        }
        Ok(())
    }

    /// `hiprtcCompileProgram`. The log is replaced whatever happens.
    pub fn compile(&self, options: &[&str], current_arch: CurrentArch) -> RtcResult {
        let mut state = self.state.lock();
        let job = toolchain::CompileJob {
            source: &self.source,
            file_name: &self.file_name,
            headers: &self.headers,
            name_expressions: &state.name_expressions,
            options,
            current_arch,
        };
        match toolchain::compile(&job) {
            Ok(done) => {
                state.log = done.log;
                let lowered = match &done.output {
                    toolchain::Output::CodeObject(code) if !state.name_expressions.is_empty() => {
                        match names::lowered_names(code, &state.name_expressions) {
                            Ok(lowered) => lowered,
                            Err(why) => {
                                state.log.push_str(&why);
                                state.compiled = None;
                                return Err(RtcError::Compilation);
                            }
                        }
                    }
                    _ => Vec::new(),
                };
                state.compiled = Some(Compiled {
                    output: match done.output {
                        toolchain::Output::CodeObject(code) => Output::CodeObject(code),
                        toolchain::Output::Bitcode(code) => Output::Bitcode(code),
                    },
                    lowered,
                });
                Ok(())
            }
            Err(failure) => {
                state.log = failure.log;
                state.compiled = None;
                Err(failure.error)
            }
        }
    }

    /// The log's length with its terminating NUL, as `hiprtcGetProgramLogSize` counts it; 0
    /// while there is no log (as AMD's hiprtc answers, so that a caller that prints a log of
    /// non-zero size prints nothing).
    pub fn log_size(&self) -> usize {
        match self.state.lock().log.len() {
            0 => 0,
            len => len + 1,
        }
    }

    /// `hiprtcGetProgramLog`: the log and its NUL, as many bytes as [`Program::log_size`].
    pub fn log(&self) -> Vec<u8> {
        let mut bytes = self.state.lock().log.clone().into_bytes();
        if !bytes.is_empty() {
            bytes.push(0);
        }
        bytes
    }

    /// `hiprtcGetCode`: the code object of a successful compilation without `-fgpu-rdc`.
    pub fn code(&self) -> RtcResult<Vec<u8>> {
        self.output(false)
    }

    /// `hiprtcGetBitcode`: the bitcode of a successful `-fgpu-rdc` compilation.
    pub fn bitcode(&self) -> RtcResult<Vec<u8>> {
        self.output(true)
    }

    fn output(&self, bitcode: bool) -> RtcResult<Vec<u8>> {
        let state = self.state.lock();
        match (&state.compiled, bitcode) {
            (
                Some(Compiled {
                    output: Output::CodeObject(code),
                    ..
                }),
                false,
            )
            | (
                Some(Compiled {
                    output: Output::Bitcode(code),
                    ..
                }),
                true,
            ) => Ok(code.clone()),
            (None, _) => {
                tracing::warn!("hiprtc: the program has not been compiled successfully");
                Err(RtcError::InvalidProgram)
            }
            (Some(_), _) => {
                tracing::warn!(
                    bitcode,
                    "hiprtc: the program was compiled {} -fgpu-rdc, which makes {}",
                    if bitcode { "without" } else { "with" },
                    if bitcode {
                        "a code object (hiprtcGetCode)"
                    } else {
                        "bitcode (hiprtcGetBitcode)"
                    }
                );
                Err(RtcError::InvalidProgram)
            }
        }
    }

    /// `hiprtcGetLoweredName`: the symbol a name expression added before compiling names.
    /// The pointer lives as long as the program.
    pub fn lowered_name(&self, expression: &str) -> RtcResult<*const std::ffi::c_char> {
        let state = self.state.lock();
        let Some(compiled) = &state.compiled else {
            return Err(RtcError::NoLoweredNamesBeforeCompilation);
        };
        compiled
            .lowered
            .iter()
            .find(|(e, _)| e == expression)
            .map(|(_, lowered)| lowered.as_ptr())
            .ok_or_else(|| {
                tracing::warn!(
                    expression,
                    "hiprtcGetLoweredName: not a name expression added before compiling"
                );
                RtcError::NameExpressionNotValid
            })
    }
}
