//! Which ROCm ABI the process expects: binaries built against ROCm 5, 6 and 7 use the same
//! function names for slightly different behaviour (AMD's "HIP API 7.0 changes" lists the 7.0
//! ones; `hipMemoryType` was renumbered in 6.0). This module owns that decision; the places
//! that differ ask [`abi`] and branch on the answer.
//!
//! The profile is decided once, on first use, in this order:
//! 1. `HIPSHIM_ABI=5|6|7` (the typed [`Config`](crate::config::Config)), when set;
//! 2. the name this library was loaded as (`libamdhip64.so.5` / `.6` / `.7`: the loader keeps
//!    the name it searched for, also when that name is a symlink to the one file hipshim ships);
//! 3. otherwise (loaded as plain `libamdhip64.so`, e.g. `LD_PRELOAD` or a link against the
//!    unversioned name) the `libamdhip64.so.N` that the program or one of its libraries
//!    records as NEEDED;
//! 4. otherwise ROCm 6: hipshim's own soname is `libamdhip64.so.6`, and ROCm 6 is what a
//!    program linked against an unversioned name most likely was built with.
//!
//! After that, reading the profile is one relaxed load of a byte.

use crate::error::{HipError, HipResult};
use crate::runtime::base::kernarg::Refusal;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicU8, Ordering};

/// The ROCm ABI generation whose behaviour the process gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Abi {
    Rocm5 = 5,
    Rocm6 = 6,
    Rocm7 = 7,
}

impl Abi {
    /// The profile for a ROCm major version (5, 6, 7); `None` for any other.
    pub const fn from_major(major: u32) -> Option<Abi> {
        match major {
            5 => Some(Abi::Rocm5),
            6 => Some(Abi::Rocm6),
            7 => Some(Abi::Rocm7),
            _ => None,
        }
    }

    /// The ABI a `libamdhip64.so[.N[.x.y]]` file name stands for (`None` if it names none).
    pub fn from_library_name(path: &str) -> Option<Abi> {
        let name = path.rsplit('/').next()?;
        let suffix = name.strip_prefix("libamdhip64.so.")?;
        let major = suffix.split('.').next()?;
        Abi::from_major(major.parse().ok()?)
    }

    /// ROCm 7 keeps the last error until it is read (as CUDA does); earlier ABIs let every call
    /// overwrite it, success included.
    pub fn sticky_last_error(self) -> bool {
        self >= Abi::Rocm7
    }

    /// Whether a launch with the grid in work-items (`hipExtModuleLaunchKernel`) that would
    /// leave a partial work-group is refused (hipErrorInvalidValue) for a kernel whose metadata
    /// says `.uniform_work_group_size: 1`: AMD's runtime checks since ROCm 5.7 (clr's
    /// `ihipModuleLaunchKernel`); Debian's ROCm 5.2 launches it.
    pub fn refuses_partial_uniform_groups(self) -> bool {
        self >= Abi::Rocm6
    }

    /// The error of a launch on a stream handle that names no live stream (destroyed or made
    /// up): ROCm 5 answers any such call hipErrorContextIsDestroyed (`dead_handle`; AMD's 5.2
    /// launch path does not check and aborts); ROCm 6's launch calls check the stream and
    /// answer hipErrorInvalidValue; ROCm 7's answer hipErrorContextIsDestroyed, its cooperative
    /// ones hipErrorInvalidHandle ("HIP API 7.0 changes").
    #[cold]
    pub fn dead_launch_stream(self, cooperative: bool) -> HipError {
        match self {
            Abi::Rocm5 => HipError::CONTEXT_IS_DESTROYED,
            Abi::Rocm6 => HipError::INVALID_VALUE,
            Abi::Rocm7 if cooperative => HipError::INVALID_HANDLE,
            Abi::Rocm7 => HipError::CONTEXT_IS_DESTROYED,
        }
    }

    /// The error a launch refused for `refusal` returns, as AMD's runtime of this generation
    /// returns it (the same for every launch call: `hipLaunchKernel`, `<<<>>>`,
    /// `hipExtLaunchKernel`, `hipModuleLaunchKernel`, `hipExtModuleLaunchKernel`,
    /// `hipLaunchKernelExC`, `hipDrvLaunchKernelEx`, kernel graph nodes; `cooperative` for
    /// `hipLaunchCooperativeKernel[MultiDevice]` and `hipModuleLaunchCooperativeKernel`):
    /// - ROCm 5: what Debian's ROCm 5.2 runtime returns on hsasim (zero dimension: invalid
    ///   value; block over the device's limit: invalid configuration; too much shared memory:
    ///   out of memory, or cooperative launch too large for a cooperative launch);
    /// - ROCm 6: its launch validation (zero: invalid configuration; block over the device's
    ///   limit: invalid value, invalid configuration for a cooperative launch; shared
    ///   memory: invalid value);
    /// - ROCm 7: AMD's "HIP API 7.0 changes" (zero: invalid value; block over the limit:
    ///   invalid configuration; shared memory: invalid value, cooperative launch too large
    ///   for a cooperative launch).
    ///
    /// Every generation fails a block over the kernel's launch bounds with
    /// hipErrorLaunchFailure; a grid over `maxGridSize` is hipshim's own check
    /// (hipErrorInvalidConfiguration, AMD's code for a grid over 2^32-1 work-items).
    #[cold]
    pub fn launch_error(self, refusal: Refusal, cooperative: bool) -> HipError {
        match (refusal, self) {
            (Refusal::ZeroDimension, Abi::Rocm6) => HipError::INVALID_CONFIGURATION,
            (Refusal::ZeroDimension, Abi::Rocm5 | Abi::Rocm7) => HipError::INVALID_VALUE,
            (Refusal::BlockOverDeviceLimit, Abi::Rocm6) if !cooperative => HipError::INVALID_VALUE,
            (Refusal::BlockOverDeviceLimit, _) => HipError::INVALID_CONFIGURATION,
            (Refusal::BlockOverLaunchBounds, _) => HipError::LAUNCH_FAILURE,
            (Refusal::GridOverDeviceLimit, _) => HipError::INVALID_CONFIGURATION,
            (Refusal::SharedMemoryOverDeviceLimit, Abi::Rocm5 | Abi::Rocm7) if cooperative => {
                HipError::COOPERATIVE_LAUNCH_TOO_LARGE
            }
            (Refusal::SharedMemoryOverDeviceLimit, Abi::Rocm5) => HipError::OUT_OF_MEMORY,
            (Refusal::SharedMemoryOverDeviceLimit, _) => HipError::INVALID_VALUE,
        }
    }
}

/// The error for a stream or array handle that names no live object (`error` is what the
/// lookup said): up to ROCm 6 AMD checks such arguments and answers
/// hipErrorContextIsDestroyed (a freed array included); ROCm 7 stopped checking streams (CUDA
/// crashes on such a handle), and hipshim keeps its hipErrorInvalidHandle there. Other errors
/// pass unchanged.
#[cold]
pub fn dead_handle(error: HipError) -> HipError {
    if error == HipError::INVALID_HANDLE && abi() <= Abi::Rocm6 {
        HipError::CONTEXT_IS_DESTROYED
    } else {
        error
    }
}

/// `hipModuleLoad` of a file that exists but is empty: ROCm 5.2 answers
/// hipErrorInvalidKernelFile (measured on hsasim), ROCm 6 hipErrorInvalidValue, ROCm 7
/// hipErrorInvalidImage (AMD's 7.0 change, CUDA's code).
#[cold]
pub fn empty_module_file() -> HipError {
    match abi() {
        Abi::Rocm5 => HipError::INVALID_KERNEL_FILE,
        Abi::Rocm6 => HipError::INVALID_VALUE,
        Abi::Rocm7 => HipError::INVALID_IMAGE,
    }
}

/// `hipProfilerStart`/`hipProfilerStop`: ROCm 7 answers success (its runtime switches its own
/// profiler on and off, in the rocm-systems sources of 2025); up to ROCm 6 they were
/// unimplemented in AMD's runtime and answered hipErrorNotSupported (clr of ROCm 6.3).
pub fn profiler_calls() -> HipResult {
    if abi() >= Abi::Rocm7 {
        Ok(())
    } else {
        Err(HipError::NOT_SUPPORTED)
    }
}

/// A `hipGraphNodeType` as the program's ABI numbers it (`code` in the numbering of ROCm 5.4
/// and later, which hipshim uses inside). The ROCm 5 profile answers in the numbering of the
/// ROCm 5 headers Debian installs (5.2: kernel 1 ... event record 8), which shifts every
/// type by one; the types those headers lack (external semaphores, memory alloc/free) keep
/// their later numbers. A program built with ROCm 5.4-5.7 headers also loads
/// `libamdhip64.so.5`: it needs `HIPSHIM_ABI=6` to read the later numbering.
pub fn graph_node_type(code: u32) -> u32 {
    const LAST_WITH_OLD_NUMBER: u32 = 7; // hipGraphNodeTypeEventRecord
    if abi() == Abi::Rocm5 && code <= LAST_WITH_OLD_NUMBER {
        code + 1
    } else {
        code
    }
}

/// Where the profile came from (for the log line that reports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Override,
    LoadedAs,
    NeededBy,
    Default,
}

/// 0 until decided, then an `Abi` value.
static PROFILE: AtomicU8 = AtomicU8::new(0);

/// The process's ABI profile (decided on the first call).
#[inline(always)]
pub fn abi() -> Abi {
    match PROFILE.load(Ordering::Relaxed) {
        5 => Abi::Rocm5,
        7 => Abi::Rocm7,
        6 => Abi::Rocm6,
        _ => decide(),
    }
}

#[cold]
#[inline(never)]
fn decide() -> Abi {
    let (abi, source) = detect();
    // Two threads may decide at once; they decide the same, and the first store wins.
    let _ = PROFILE.compare_exchange(0, abi as u8, Ordering::Relaxed, Ordering::Relaxed);
    tracing::debug!(?abi, ?source, "ROCm ABI profile");
    abi
}

fn detect() -> (Abi, Source) {
    if let Some(major) = crate::config::Config::global().abi {
        if let Some(abi) = Abi::from_major(major) {
            return (abi, Source::Override);
        }
    }
    if let Some(abi) = loaded_as().as_deref().and_then(Abi::from_library_name) {
        return (abi, Source::LoadedAs);
    }
    if let Some(abi) = needed_by_loaded_objects() {
        return (abi, Source::NeededBy);
    }
    (Abi::Rocm6, Source::Default)
}

/// The path the loader opened this library under (its `link_map` name).
fn loaded_as() -> Option<String> {
    // SAFETY: dladdr only reads the loader's tables for an address inside this library and
    // fills `info`; the name it returns lives as long as the library stays loaded.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(abi as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// The ABI of the first `libamdhip64.so.N` a loaded object (the program first) records as
/// NEEDED.
fn needed_by_loaded_objects() -> Option<Abi> {
    let mut found: Option<Abi> = None;
    // SAFETY: the callback only reads the program headers and dynamic sections the loader
    // passes it, for objects it keeps mapped during the walk.
    unsafe {
        libc::dl_iterate_phdr(
            Some(visit_object),
            &mut found as *mut Option<Abi> as *mut c_void,
        );
    }
    found
}

/// One entry of an ELF64 `PT_DYNAMIC` array (the `libc` crate does not define it).
#[repr(C)]
struct DynamicEntry {
    tag: i64,
    value: u64,
}
const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_STRTAB: i64 = 5;

/// `dl_iterate_phdr` callback: scans one object's DT_NEEDED entries; stops the walk (returns
/// non-zero) at the first `libamdhip64.so.N`.
unsafe extern "C" fn visit_object(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader passes a valid `info` for the duration of the call, and `data` is the
    // `Option<Abi>` `needed_by_loaded_objects` passed in.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Option<Abi>)) };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers of a mapped object.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let Some(dynamic) = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC) else {
        return 0;
    };
    let mut entry = (info.dlpi_addr as usize + dynamic.p_vaddr as usize) as *const DynamicEntry;
    let (mut strtab, mut needed) = (0usize, Vec::new());
    // SAFETY: PT_DYNAMIC of a mapped object is an array of entries ended by DT_NULL; the
    // loader has relocated DT_STRTAB to an address (glibc does, for every object but the
    // vDSO, whose string table offset is below its base and which has no DT_NEEDED).
    unsafe {
        while (*entry).tag != DT_NULL {
            match (*entry).tag {
                DT_NEEDED => needed.push((*entry).value as usize),
                DT_STRTAB => strtab = (*entry).value as usize,
                _ => {}
            }
            entry = entry.add(1);
        }
    }
    if strtab < info.dlpi_addr as usize {
        return 0;
    }
    for offset in needed {
        // SAFETY: a DT_NEEDED value is an offset of a NUL-terminated name in DT_STRTAB.
        let name = unsafe { CStr::from_ptr((strtab + offset) as *const libc::c_char) };
        if let Some(abi) = Abi::from_library_name(&name.to_string_lossy()) {
            *found = Some(abi);
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names_give_their_abi() {
        assert_eq!(
            Abi::from_library_name("/opt/x/libamdhip64.so.5"),
            Some(Abi::Rocm5)
        );
        assert_eq!(
            Abi::from_library_name("libamdhip64.so.6.2.60200"),
            Some(Abi::Rocm6)
        );
        assert_eq!(
            Abi::from_library_name("lib/libamdhip64.so.7"),
            Some(Abi::Rocm7)
        );
        assert_eq!(Abi::from_library_name("/x/libamdhip64.so"), None);
        assert_eq!(Abi::from_library_name("libamdhip64.so.8"), None);
        assert_eq!(Abi::from_library_name("libhiprtc.so.6"), None);
    }

    #[test]
    fn only_rocm_7_keeps_the_last_error() {
        assert!(!Abi::Rocm5.sticky_last_error());
        assert!(!Abi::Rocm6.sticky_last_error());
        assert!(Abi::Rocm7.sticky_last_error());
    }

    /// Each generation's codes for each refusal: a row per refusal, columns ROCm 5, 6, 7.
    #[test]
    fn launch_refusals_get_each_generations_error() {
        use HipError as E;
        let table = [
            (
                Refusal::ZeroDimension,
                false,
                [E::INVALID_VALUE, E::INVALID_CONFIGURATION, E::INVALID_VALUE],
            ),
            (
                Refusal::ZeroDimension,
                true,
                [E::INVALID_VALUE, E::INVALID_CONFIGURATION, E::INVALID_VALUE],
            ),
            (
                Refusal::BlockOverDeviceLimit,
                false,
                [
                    E::INVALID_CONFIGURATION,
                    E::INVALID_VALUE,
                    E::INVALID_CONFIGURATION,
                ],
            ),
            (
                Refusal::BlockOverDeviceLimit,
                true,
                [E::INVALID_CONFIGURATION; 3],
            ),
            (
                Refusal::BlockOverLaunchBounds,
                false,
                [E::LAUNCH_FAILURE; 3],
            ),
            (Refusal::BlockOverLaunchBounds, true, [E::LAUNCH_FAILURE; 3]),
            (
                Refusal::GridOverDeviceLimit,
                false,
                [E::INVALID_CONFIGURATION; 3],
            ),
            (
                Refusal::SharedMemoryOverDeviceLimit,
                false,
                [E::OUT_OF_MEMORY, E::INVALID_VALUE, E::INVALID_VALUE],
            ),
            (
                Refusal::SharedMemoryOverDeviceLimit,
                true,
                [
                    E::COOPERATIVE_LAUNCH_TOO_LARGE,
                    E::INVALID_VALUE,
                    E::COOPERATIVE_LAUNCH_TOO_LARGE,
                ],
            ),
        ];
        for (refusal, cooperative, errors) in table {
            for (abi, error) in [Abi::Rocm5, Abi::Rocm6, Abi::Rocm7].into_iter().zip(errors) {
                assert_eq!(
                    abi.launch_error(refusal, cooperative),
                    error,
                    "{refusal:?} {cooperative} {abi:?}"
                );
            }
        }
    }

    #[test]
    fn launches_on_dead_streams_get_each_generations_error() {
        use HipError as E;
        let abis = [Abi::Rocm5, Abi::Rocm6, Abi::Rocm7];
        let plain = abis.map(|abi| abi.dead_launch_stream(false));
        let cooperative = abis.map(|abi| abi.dead_launch_stream(true));
        assert_eq!(
            plain,
            [
                E::CONTEXT_IS_DESTROYED,
                E::INVALID_VALUE,
                E::CONTEXT_IS_DESTROYED
            ]
        );
        assert_eq!(
            cooperative,
            [E::CONTEXT_IS_DESTROYED, E::INVALID_VALUE, E::INVALID_HANDLE]
        );
    }

    #[test]
    fn the_walk_over_loaded_objects_finds_nothing_in_a_test_binary() {
        // The unit-test binary links no libamdhip64.so.N: the walk must visit every object
        // (the vDSO included) without faulting and come back empty.
        assert_eq!(needed_by_loaded_objects(), None);
    }
}
