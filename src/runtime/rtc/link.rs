//! Linking LLVM bitcode into one code object, for hiprtc (`hiprtcLink*`, answering
//! `hiprtcResult`) and for the module API's linker (`hipLink*`, ROCm 6.4, answering
//! `hipError_t`). Both gather their inputs in a [`Linker`], which links them with the
//! compiler hiprtc runs (`toolchain::link`: clang driving lld, with link-time optimisation, so
//! that calls between the inputs resolve).
//!
//! The two APIs take different inputs. hiprtc takes LLVM bitcode, plain or in an offload
//! bundle, as its input type says. AMD's `hipLinkAddData`/`hipLinkAddFile` take
//! `hipJitInputSpirv` only: every other input type is `hipErrorInvalidValue` (AMD's
//! conformance tests assert it), and AMD hands the bytes to comgr, which reads AMD-flavoured
//! SPIR-V (`--offload-arch=amdgcnspirv`), bare or in an offload bundle. hipshim has no SPIR-V
//! reader (comgr's translator is not packaged for the LLVM it runs, and clang 19 cannot even
//! write such SPIR-V without it), so it reads what a `hipJitInputSpirv` input holds:
//! - LLVM bitcode for an AMD GPU, bare (hiprtc's `-fgpu-rdc` output, `clang -fgpu-rdc
//!   --cuda-device-only -c`) or in an offload bundle (the entry for the architecture linked
//!   for): linked;
//! - SPIR-V, bare or bundled: `hipErrorNotSupported`, with a log line saying why;
//! - anything else (a finished code object, text): `hipErrorInvalidConfiguration`, AMD's
//!   answer to data its linker cannot take.
//!
//! A link of nothing makes a code object without kernels, as AMD's does (its conformance
//! tests complete an empty link); hiprtc's refuses it, as AMD's hiprtc does.

use super::error::{RtcError, RtcResult};
use super::toolchain::{self, CurrentArch};
use crate::error::{HipError, HipResult};
use crate::runtime::base::handles::HandleTable;
use parking_lot::Mutex;
use std::sync::Arc;

/// `hiprtcJIT_option` / `hipJitOption` values the linkers read: compiler options for the link
/// (an array of C strings, and their number).
pub const JIT_IR_TO_ISA_OPT_EXT: u32 = 10000;
pub const JIT_IR_TO_ISA_OPT_COUNT_EXT: u32 = 10001;

/// `hiprtcJITInputType` / `hipJitInputType` (the same values).
pub const JIT_INPUT_LLVM_BITCODE: u32 = 100;
pub const JIT_INPUT_LLVM_BUNDLED_BITCODE: u32 = 101;
pub const JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE: u32 = 102;
pub const JIT_INPUT_SPIRV: u32 = 103;

/// The `hipJitOption`s that are CUDA's (`hipJitOptionMaxRegisters` = 0 to
/// `hipJitOptionNumOptions` = 29, ROCm 6.4's numbering; ROCm 5's list is a prefix of it):
/// AMD's `hipLinkCreate` refuses every one.
const CUDA_JIT_OPTIONS: std::ops::RangeInclusive<u32> = 0..=29;

/// Bitcode as given: a module, or an offload bundle whose entry for the architecture is one.
enum Bitcode {
    Plain(Vec<u8>),
    Bundled(Vec<u8>),
}

/// The inputs of one link and what linking them made.
struct Linker {
    /// Options for the compiler (`*_IR_TO_ISA_OPT_EXT`).
    options: Vec<String>,
    inner: Mutex<LinkInner>,
}

#[derive(Default)]
struct LinkInner {
    /// (name for the log, the input).
    inputs: Vec<(String, Bitcode)>,
    /// The linked code object; `*LinkComplete` hands out a pointer into it.
    linked: Option<Vec<u8>>,
}

impl Linker {
    fn new(options: Vec<String>) -> Linker {
        Linker {
            options,
            inner: Mutex::new(LinkInner::default()),
        }
    }

    fn add(&self, name: String, input: Bitcode) {
        self.inner.lock().inputs.push((name, input));
    }

    fn is_empty(&self) -> bool {
        self.inner.lock().inputs.is_empty()
    }

    /// Links everything added (nothing: an empty module) into a code object for the
    /// architecture the options name, else the current device's. Returns its address and
    /// size, valid until the link is completed again or destroyed.
    fn complete(&self, current_arch: CurrentArch) -> RtcResult<(*const u8, usize)> {
        let mut inner = self.inner.lock();
        let arch = toolchain::link_arch(&self.options, current_arch)?;
        let mut modules = Vec::with_capacity(inner.inputs.len());
        for (name, input) in &inner.inputs {
            modules.push(match input {
                Bitcode::Plain(bytes) => bytes.clone(),
                Bitcode::Bundled(bytes) => toolchain::unbundle_bitcode(bytes, &arch, name)?,
            });
        }
        let code = toolchain::link(&modules, &arch, &self.options)?;
        let linked = inner.linked.insert(code);
        Ok((linked.as_ptr(), linked.len()))
    }
}

// ---- hiprtc ----------------------------------------------------------------------------

/// A `hiprtcLinkState`.
pub struct LinkState(Linker);

static LINK_STATES: HandleTable<LinkState> = HandleTable::new("hiprtc link state", 0xd0);

/// `hiprtcLinkCreate` with its `HIPRTC_JIT_IR_TO_ISA_OPT_EXT` options already read.
pub fn link_create(options: Vec<String>) -> usize {
    LINK_STATES.insert(Arc::new(LinkState(Linker::new(options))))
}

pub fn link_state(handle: usize) -> RtcResult<Arc<LinkState>> {
    LINK_STATES.get(handle).map_err(|_| RtcError::InvalidInput)
}

/// `hiprtcLinkDestroy`: the linked code object dies with it.
pub fn link_destroy(handle: usize) -> RtcResult {
    LINK_STATES
        .remove(handle)
        .map(drop)
        .map_err(|_| RtcError::InvalidInput)
}

impl LinkState {
    /// `hiprtcLinkAddData`/`AddFile`: LLVM bitcode, plain or in an offload bundle.
    pub fn add(&self, input_type: u32, name: String, data: Vec<u8>) -> RtcResult {
        let input = match input_type {
            JIT_INPUT_LLVM_BITCODE => Bitcode::Plain(data),
            JIT_INPUT_LLVM_BUNDLED_BITCODE => Bitcode::Bundled(data),
            JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE => {
                tracing::warn!(
                    name,
                    "hiprtcLink: archives of bundled bitcode are not supported by hipshim; \
                     extract the members and add them as HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE"
                );
                return Err(RtcError::InvalidInput);
            }
            other => {
                tracing::warn!(
                    name,
                    input_type = other,
                    "hiprtcLink: an AMD GPU links LLVM bitcode only \
                     (HIPRTC_JIT_INPUT_LLVM_BITCODE or _LLVM_BUNDLED_BITCODE); \
                     CUBIN, PTX, fat binaries, objects, libraries and NVVM are CUDA's"
                );
                return Err(RtcError::InvalidInput);
            }
        };
        self.0.add(name, input);
        Ok(())
    }

    /// `hiprtcLinkComplete`: links everything added into a code object for the current
    /// device (or the architecture an option names). Returns its address and size, valid
    /// until the state is destroyed or completed again.
    pub fn complete(&self, current_arch: CurrentArch) -> RtcResult<(*const u8, usize)> {
        if self.0.is_empty() {
            tracing::warn!("hiprtcLinkComplete: nothing was added to link");
            return Err(RtcError::InvalidInput);
        }
        self.0.complete(current_arch)
    }
}

// ---- hipLink* --------------------------------------------------------------------------

/// A `hipLinkState_t`.
pub struct HipLinkState(Linker);

static HIP_LINK_STATES: HandleTable<HipLinkState> = HandleTable::new("hip link state", 0xd0);

/// `hipLinkCreate`'s check of its option kinds: AMD's refuses CUDA's, and takes (and
/// ignores) the values it does not know.
pub fn hip_link_check_options(kinds: &[u32]) -> HipResult {
    if let Some(kind) = kinds.iter().find(|k| CUDA_JIT_OPTIONS.contains(k)) {
        tracing::warn!(
            option = kind,
            "hipLinkCreate: hipJitOption {kind} is CUDA's; an AMD GPU's linker takes \
             hipJitOptionIRtoISAOptExt (10000) and hipJitOptionIRtoISAOptCountExt (10001) only"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

/// `hipLinkCreate` with its `hipJitOptionIRtoISAOptExt` options already read.
pub fn hip_link_create(options: Vec<String>) -> usize {
    HIP_LINK_STATES.insert(Arc::new(HipLinkState(Linker::new(options))))
}

/// The live link a `hipLinkState_t` names (the caller says what an unknown one is: AMD's
/// answers differ by call).
pub fn hip_link_state(handle: usize) -> Option<Arc<HipLinkState>> {
    HIP_LINK_STATES.get(handle).ok()
}

/// `hipLinkDestroy`: the linked code object dies with it.
pub fn hip_link_destroy(handle: usize) -> HipResult {
    HIP_LINK_STATES
        .remove(handle)
        .map(drop)
        .map_err(|_| HipError::INVALID_VALUE)
}

/// `hipLinkAddData`/`AddFile`'s input type: `hipJitInputSpirv` only, as AMD's takes.
pub fn hip_link_check_input_type(input_type: u32, call: &str) -> HipResult {
    if input_type == JIT_INPUT_SPIRV {
        return Ok(());
    }
    tracing::warn!(
        input_type,
        "{call}: the linker takes hipJitInputSpirv (103) only, as AMD's does (types 0-5 are \
         CUDA's); LLVM bitcode goes in as hipJitInputSpirv (hipshim reads what an input \
         holds) or through hiprtcLinkAddData"
    );
    Err(HipError::INVALID_VALUE)
}

impl HipLinkState {
    /// `hipLinkAddData`/`AddFile` of a `hipJitInputSpirv` input (see the module
    /// documentation for what it may hold).
    pub fn add(&self, name: &str, data: Vec<u8>) -> HipResult {
        let input = spirv_input(name, data)?;
        self.0.add(name.to_owned(), input);
        Ok(())
    }

    /// `hipLinkComplete`: the code object, valid until the link is destroyed or completed
    /// again. A failed link is `hipErrorInvalidConfiguration`, as in AMD's runtime (the log
    /// has the linker's diagnostics).
    pub fn complete(&self, current_arch: CurrentArch) -> HipResult<(*const u8, usize)> {
        self.0.complete(current_arch).map_err(|error| {
            tracing::warn!(?error, "hipLinkComplete: the link failed");
            HipError::INVALID_CONFIGURATION
        })
    }
}

/// LLVM bitcode, bare or in its wrapper (`0x0b17c0de`, little-endian).
fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xc0\xde") || bytes.starts_with(&[0xde, 0xc0, 0x17, 0x0b])
}

/// A SPIR-V module: its magic number 0x07230203 in either byte order.
fn is_spirv(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x03, 0x02, 0x23, 0x07]) || bytes.starts_with(&[0x07, 0x23, 0x02, 0x03])
}

const NO_SPIRV: &str = "hipshim cannot read SPIR-V: AMD's runtime translates it with comgr's \
SPIR-V reader, which is not packaged for the LLVM hipshim's compiler is; link LLVM bitcode \
instead (hiprtc with -fgpu-rdc, or clang -fgpu-rdc --cuda-device-only -c \
--offload-arch=gfx90a)";

/// What a `hipJitInputSpirv` input holds, as the link can use it.
fn spirv_input(name: &str, data: Vec<u8>) -> HipResult<Bitcode> {
    use crate::runtime::code_object::parse_bundle;
    if is_bitcode(&data) {
        return Ok(Bitcode::Plain(data));
    }
    if is_spirv(&data) {
        tracing::warn!(name, "hipLinkAdd: the input is SPIR-V; {NO_SPIRV}");
        return Err(HipError::NOT_SUPPORTED);
    }
    let unusable = |what: &str| {
        tracing::warn!(
            name,
            "hipLinkAdd: the input is {what}; the linker takes LLVM bitcode for an AMD GPU, \
             bare or in an offload bundle (a finished code object needs no link: \
             hipModuleLoadData loads it)"
        );
        HipError::INVALID_CONFIGURATION
    };
    if !(data.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") || data.starts_with(b"CCOB")) {
        return Err(unusable(if data.starts_with(b"\x7fELF") {
            "an ELF file"
        } else {
            "neither LLVM bitcode, SPIR-V nor an offload bundle"
        }));
    }
    let (bitcode, spirv) = match parse_bundle(&data) {
        Ok(entries) => (
            entries.iter().any(|e| is_bitcode(&e.data)),
            entries
                .iter()
                .any(|e| is_spirv(&e.data) || e.id.contains("spirv")),
        ),
        Err(e) => {
            tracing::warn!(name, error = %e, "hipLinkAdd: an unreadable offload bundle");
            return Err(HipError::INVALID_CONFIGURATION);
        }
    };
    match (bitcode, spirv) {
        (true, _) => Ok(Bitcode::Bundled(data)),
        (false, true) => {
            tracing::warn!(name, "hipLinkAdd: the bundle holds SPIR-V; {NO_SPIRV}");
            Err(HipError::NOT_SUPPORTED)
        }
        (false, false) => Err(unusable("an offload bundle without bitcode")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_inputs_are_read_by_what_they_hold() {
        assert!(matches!(
            spirv_input("bc", b"BC\xc0\xde\x35\x14".to_vec()),
            Ok(Bitcode::Plain(_))
        ));
        assert!(matches!(
            spirv_input("wrapped", vec![0xde, 0xc0, 0x17, 0x0b, 0, 0]),
            Ok(Bitcode::Plain(_))
        ));
        assert_eq!(
            spirv_input("spv", vec![0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0]).err(),
            Some(HipError::NOT_SUPPORTED)
        );
        assert_eq!(
            spirv_input("elf", b"\x7fELF\x02\x01\x01".to_vec()).err(),
            Some(HipError::INVALID_CONFIGURATION)
        );
        assert_eq!(
            spirv_input("text", b"__global__ void k() {}".to_vec()).err(),
            Some(HipError::INVALID_CONFIGURATION)
        );
        assert_eq!(
            spirv_input("cut", b"__CLANG_OFFLOAD_BUNDLE__\x05".to_vec()).err(),
            Some(HipError::INVALID_CONFIGURATION)
        );
    }

    #[test]
    fn create_refuses_cudas_options_and_takes_the_rest() {
        assert_eq!(
            hip_link_check_options(&[JIT_IR_TO_ISA_OPT_EXT, 3]),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(hip_link_check_options(&[29]), Err(HipError::INVALID_VALUE));
        assert_eq!(
            hip_link_check_options(&[JIT_IR_TO_ISA_OPT_EXT, JIT_IR_TO_ISA_OPT_COUNT_EXT, 5000]),
            Ok(())
        );
        assert_eq!(
            hip_link_check_input_type(JIT_INPUT_LLVM_BITCODE, "t"),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(hip_link_check_input_type(JIT_INPUT_SPIRV, "t"), Ok(()));
    }

    #[test]
    fn a_destroyed_link_is_gone() {
        let handle = hip_link_create(Vec::new());
        assert!(hip_link_state(handle).is_some());
        assert_eq!(hip_link_destroy(handle), Ok(()));
        assert!(hip_link_state(handle).is_none());
        assert_eq!(hip_link_destroy(handle), Err(HipError::INVALID_VALUE));
        assert_eq!(hip_link_destroy(0), Err(HipError::INVALID_VALUE));
    }
}
