//! Code objects: from the fat binary clang embeds in a HIP program to the per-kernel
//! metadata a launch needs.
//!
//! The path is `__hipRegisterFatBinary(wrapper)` → [`ForeignBundle::from_wrapper`] (find
//! the bundle and its length) → [`ForeignBundle::code_object_for`] or, for an image in
//! hand, [`parse_bundle`] (split it into one entry per target) → [`select_code_object`]
//! (pick the entry that runs on the agent's ISA) → [`read_code_object`] (kernel names,
//! kernarg layout, segment sizes). `hipModuleLoadData` gets its image through
//! [`image_from_memory`].
//!
//! Every parser here is total: every length, offset, count and alignment read from the
//! bytes is checked, so a corrupt image produces a [`CodeObjectError`], never a panic, an
//! overflow or an out-of-bounds read, and no header can make it allocate more than the
//! limits below. Images that come without a length (a pointer and a header that claims
//! an extent) are read only through a checked reader (see "Memory of unknown extent"):
//! a header that claims more bytes than exist is [`CodeObjectError::Unreadable`], never a
//! fault. `tests/fuzz_code_objects.rs` holds all of this to account.
//!
//! # Formats (verified against the sources named, and against clang-19 output)
//!
//! **Fat binary wrapper** (clang `CGCUDANV.cpp`, section `.hipFatBinSegment`):
//! `{ u32 magic = 0x48495046 ("HIPF"), u32 version = 1, const void *bundle, void *reserved }`.
//!
//! **Uncompressed offload bundle** (clang `OffloadBundler.cpp`), all integers little-endian:
//! 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, `u64` entry count, then per entry
//! `u64 offset, u64 size, u64 id_len, id bytes` (offsets are from the bundle start).
//! clang-19 aligns each code object to 4096 bytes; the host entry has size 0.
//!
//! **Compressed offload bundle** (`CompressedOffloadBundle` in clang's `OffloadBundler.cpp`
//! and LLVM's `Object/OffloadBundle.cpp`; packed, little-endian):
//!
//! | version | layout after `"CCOB"`, `u16 version`, `u16 method`                    | header |
//! |---------|-------------------------------------------------------------------------|--------|
//! | 1       | `u32 uncompressed_size, u64 hash`                                        | 20 B   |
//! | 2       | `u32 total_file_size, u32 uncompressed_size, u64 hash`                   | 24 B   |
//! | 3       | `u64 total_file_size, u64 uncompressed_size, u64 hash`                   | 32 B   |
//!
//! `method` is `llvm::compression::Format`: 0 = zlib, 1 = zstd. The compressed payload
//! follows the header; in v2/v3 it ends at `total_file_size` (which counts the header), in
//! v1 it runs to the end of the buffer, so for v1 we find its end by walking the zstd frame.
//! The hash (MD5-derived in LLVM) is only printed by clang's verbose mode and is not
//! checked here: the decompressed length is. clang-19 with `--offload-compress` writes
//! version 2, method 1 (zstd).
//!
//! **Metadata** (LLVM `AMDGPUUsage`, "Code Object V3..V6 Metadata"): an ELF note with name
//! `"AMDGPU"` and type `NT_AMDGPU_METADATA` = 32 holding a msgpack map with
//! `amdhsa.version` (`[1,0]` = code object v3, `[1,1]` = v4, `[1,2]` = v5, `[1,3]` = v6),
//! `amdhsa.target` (v4+) and `amdhsa.kernels`.

use std::borrow::Cow;
use std::ffi::c_void;
use std::fmt;
use std::io::Read;

use object::elf::{FileHeader64, EM_AMDGPU};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;
use rmpv::Value;

/// `"HIPF"` read as a little-endian u32: the first field of clang's fat binary wrapper.
pub const HIP_FATBIN_MAGIC: u32 = 0x4849_5046;
/// The only wrapper version clang emits.
pub const HIP_FATBIN_VERSION: u32 = 1;

const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
const CCOB_MAGIC: &[u8; 4] = b"CCOB";
const CCOB_METHOD_ZLIB: u16 = 0;
const CCOB_METHOD_ZSTD: u16 = 1;

/// ELF note type of the msgpack metadata (LLVM `ELF.h`: `NT_AMDGPU_METADATA = 32`).
pub const NT_AMDGPU_METADATA: u32 = 32;

// Sanity limits. A real bundle has a handful of entries with ids under 100 bytes; these
// bound what a corrupt header can make us walk or allocate, which matters most for images
// without a length (`ForeignBundle`, `image_from_memory`), whose only bound is the header.
const MAX_BUNDLE_ENTRIES: u64 = 4096;
const MAX_ENTRY_ID_LEN: u64 = 4096;
/// The most bytes any header may claim for an image (bundles of many GPUs in large
/// libraries pass 4 GiB, hence CCOB v3).
const MAX_BUNDLE_SIZE: u64 = 1 << 36;
/// The most bytes copied out of memory for an image without a length; it is copied a step
/// at a time, so a lying header allocates no more than what is readable.
const MAX_IMAGE_COPY: u64 = 1 << 32;
const MAX_ZSTD_BLOCKS: u64 = 1 << 22;
/// ELF extended section numbering allows 2^32 sections; code objects have a few dozen.
const MAX_ELF_SECTIONS: u64 = 1 << 20;
/// A compressed bundle may expand to at most this many times its compressed size, and
/// always to `MIN_DECOMPRESSED_LIMIT`: code objects compress 5 to 20 times, while a zstd
/// frame of RLE blocks can promise 32768 times its size. Decompression output is what
/// would be allocated, so a header (or frame) past this is refused before decompressing.
const MAX_EXPANSION: u64 = 1024;
const MIN_DECOMPRESSED_LIMIT: u64 = 64 << 20;
/// msgpack nesting the metadata reader follows (the metadata nests five levels; rmpv
/// counts two per container).
const MAX_METADATA_DEPTH: usize = 64;

// ELF `e_flags` for AMDGPU (LLVM `BinaryFormat/ELF.h`).
const EF_AMDGPU_MACH: u32 = 0x0ff;
const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_XNACK_OFF_V4: u32 = 0x200;
const EF_AMDGPU_FEATURE_XNACK_ON_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
const EF_AMDGPU_FEATURE_SRAMECC_OFF_V4: u32 = 0x800;
const EF_AMDGPU_FEATURE_SRAMECC_ON_V4: u32 = 0xc00;
// `e_ident[EI_ABIVERSION]` for ELFOSABI_AMDGPU_HSA: V3 = 1, V4 = 2, V5 = 3, V6 = 4.
const ELFABIVERSION_AMDGPU_HSA_V3: u8 = 1;

/// Everything that can go wrong between a fat binary and a kernel's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeObjectError {
    /// A pointer that must not be null was (the wrapper, or its bundle field).
    NullPointer(&'static str),
    /// The `__hipRegisterFatBinary` argument is not a version-1 "HIPF" wrapper.
    BadWrapper { magic: u32, version: u32 },
    /// The bytes are neither `__CLANG_OFFLOAD_BUNDLE__` nor `CCOB`.
    UnknownBundleFormat { magic: [u8; 4] },
    /// An image without a length (`hipModuleLoadData`, `__hipRegisterFatBinary`) needs bytes
    /// up to `end` (from its header), but the memory at `address` is unreadable from
    /// offset `at` on.
    Unreadable {
        what: &'static str,
        address: usize,
        at: u64,
        end: u64,
    },
    /// A field or entry extends past the end of the available bytes.
    Truncated {
        what: &'static str,
        end: u64,
        len: u64,
    },
    /// A structurally impossible value (overflowing offsets, absurd counts, bad UTF-8 ...).
    Corrupt(String),
    /// A well-formed input this build cannot handle (e.g. zlib-compressed bundles).
    Unsupported(String),
    /// The compressed payload did not decompress to the size its header promised.
    Decompress(String),
    /// A target id / ISA name that does not parse.
    InvalidTargetId(String),
    /// No code object in the fat binary runs on the agent (`hipErrorNoBinaryForGpu`).
    NoBinaryForGpu {
        agent: String,
        available: Vec<String>,
    },
    /// The code object is not an AMDGPU ELF.
    NotAmdgpuElf(String),
    /// The code object has no `NT_AMDGPU_METADATA` note.
    MissingMetadata,
    /// The metadata note is present but not what AMDGPUUsage describes.
    BadMetadata(String),
}

impl fmt::Display for CodeObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NullPointer(what) => write!(f, "null pointer: {what}"),
            Self::BadWrapper { magic, version } => write!(
                f,
                "not a HIP fat binary wrapper: magic {magic:#010x} version {version} \
                 (expected {HIP_FATBIN_MAGIC:#010x} version {HIP_FATBIN_VERSION})"
            ),
            Self::UnknownBundleFormat { magic } => write!(
                f,
                "not a clang offload bundle: starts with {:02x?} \
                 (expected \"__CLANG_OFFLOAD_BUNDLE__\" or \"CCOB\")",
                magic
            ),
            Self::Unreadable {
                what,
                address,
                at,
                end,
            } => write!(
                f,
                "{what}: the image at {address:#x} needs {end} bytes by its header, but the \
                 memory is unreadable from byte {at} on (a truncated image, or a header that \
                 claims more bytes than exist)"
            ),
            Self::Truncated { what, end, len } => write!(
                f,
                "truncated offload bundle or code object: {what} ends at byte {end} \
                 but only {len} bytes are available"
            ),
            Self::Corrupt(msg) => write!(f, "corrupt offload bundle: {msg}"),
            Self::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Self::Decompress(msg) => write!(f, "cannot decompress offload bundle: {msg}"),
            Self::InvalidTargetId(msg) => write!(f, "invalid target id: {msg}"),
            Self::NoBinaryForGpu { agent, available } => {
                write!(
                    f,
                    "no code object for device ISA {agent} in the fat binary; "
                )?;
                if available.is_empty() {
                    write!(f, "it contains no GPU code objects")
                } else {
                    write!(f, "it contains: {}", available.join(", "))
                }
            }
            Self::NotAmdgpuElf(msg) => write!(f, "not an AMDGPU code object: {msg}"),
            Self::MissingMetadata => write!(
                f,
                "code object has no AMDGPU metadata note (NT_AMDGPU_METADATA); \
                 code object v2 and older are not supported"
            ),
            Self::BadMetadata(msg) => write!(f, "bad AMDGPU code object metadata: {msg}"),
        }
    }
}

impl std::error::Error for CodeObjectError {}

type Result<T, E = CodeObjectError> = std::result::Result<T, E>;

fn corrupt(msg: impl Into<String>) -> CodeObjectError {
    CodeObjectError::Corrupt(msg.into())
}

// ---------------------------------------------------------------------------------------
// Reading little-endian fields from a slice or from memory of unknown extent.

/// Where header fields come from: a slice (bounds-checked) or [`ForeignBytes`] (each read
/// checked for readability), so one header walk serves both.
trait ByteSource {
    fn read(&self, offset: u64, out: &mut [u8], what: &'static str) -> Result<()>;

    fn u16_at(&self, offset: u64, what: &'static str) -> Result<u16> {
        let mut b = [0; 2];
        self.read(offset, &mut b, what)?;
        Ok(u16::from_le_bytes(b))
    }
    fn u32_at(&self, offset: u64, what: &'static str) -> Result<u32> {
        let mut b = [0; 4];
        self.read(offset, &mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64_at(&self, offset: u64, what: &'static str) -> Result<u64> {
        let mut b = [0; 8];
        self.read(offset, &mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }
}

impl ByteSource for [u8] {
    fn read(&self, offset: u64, out: &mut [u8], what: &'static str) -> Result<()> {
        let len = self.len() as u64;
        let end = offset.saturating_add(out.len() as u64);
        if end > len {
            return Err(CodeObjectError::Truncated { what, end, len });
        }
        // Both conversions are lossless: `end <= len`, which is a usize.
        out.copy_from_slice(&self[offset as usize..end as usize]);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Memory of unknown extent.
//
// `hipModuleLoadData(Ex)` and `__hipRegisterFatBinary` get a pointer and no length: the
// length is whatever the header there claims, and a truncated or corrupt header claims
// bytes that need not be mapped. Such memory is only ever read through `read_foreign`,
// which copies with process_vm_readv(2) on our own pid: the kernel performs the access,
// so an unmapped or unreadable page ends the copy (EFAULT, or a short count) instead of
// raising SIGSEGV in the caller.
//
// Why process_vm_readv and not /proc/self/maps: the check and the copy are one step, so
// no mapping can change between them; there is no text to read and parse whose size grows
// with the process (a fat binary is registered per translation unit, thousands of times
// in large libraries); and it answers exactly "can these bytes be read now", PROT_NONE
// guard pages and holes between mappings included. Reading one's own memory needs no
// ptrace permission: the kernel exempts the caller's own thread group from those checks.
// /proc/self/maps is consulted only where process_vm_readv cannot give the answer: when a
// seccomp filter refuses the call (EPERM, ENOSYS), and when it stops on memory it cannot
// pin (VM_IO/VM_PFNMAP mappings, such as host memory a GPU driver mapped), so readable
// memory is never refused. With neither available the memory is trusted, as it was before
// these checks, and a warning says so once.

/// Bytes [`ForeignBytes`] reads at a time: header walks read many small fields.
const FOREIGN_CHUNK: usize = 4096;
/// Bytes [`copy_foreign`] adds to its result at a time: the most it allocates beyond what
/// turned out to be readable.
const COPY_STEP: u64 = 1 << 20;

/// Copies from address `addr` of this process into `out`; returns how many leading bytes
/// were readable (those are now in `out`). The first `needed` bytes are the ones the caller
/// must have; the rest are read ahead, and are not read at all where the memory has to be
/// trusted.
fn read_foreign(addr: usize, out: &mut [u8], needed: usize) -> usize {
    // A range that would wrap around the address space is unreadable past the top.
    let len = out.len().min(usize::MAX - addr);
    let out = &mut out[..len];
    let (copied, refused) = vm_read(addr, out);
    if copied == out.len() {
        return copied;
    }
    let rest = &mut out[copied..];
    let start = addr + copied;
    match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => {
            let readable = readable_prefix(&maps, start, rest.len());
            if readable > 0 {
                // SAFETY: /proc/self/maps lists [start, start + readable) as mapped and
                // readable (process_vm_readv could not pin it, or was not allowed to run).
                unsafe {
                    std::ptr::copy_nonoverlapping(start as *const u8, rest.as_mut_ptr(), readable)
                };
            }
            copied + readable
        }
        Err(e) if refused => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    error = %e,
                    "neither process_vm_readv nor /proc/self/maps is available: code images \
                     without a length are trusted to be as long as their headers claim"
                )
            });
            // SAFETY: unchecked: the caller's pointer and the header it came with are
            // trusted for the bytes the walk needs, as before these checks existed (see the
            // comment above `FOREIGN_CHUNK`); nothing is read ahead.
            let must = needed.min(len).saturating_sub(copied);
            unsafe { std::ptr::copy_nonoverlapping(start as *const u8, rest.as_mut_ptr(), must) };
            copied + must
        }
        Err(_) => copied,
    }
}

/// `process_vm_readv` of our own memory. Returns the bytes copied and whether the kernel
/// refused the call itself (so the count says nothing about readability).
fn vm_read(addr: usize, out: &mut [u8]) -> (usize, bool) {
    let mut done = 0;
    while done < out.len() {
        let left = out.len() - done;
        let local = libc::iovec {
            iov_base: out[done..].as_mut_ptr().cast(),
            iov_len: left,
        };
        let remote = libc::iovec {
            iov_base: (addr + done) as *mut c_void,
            iov_len: left,
        };
        // SAFETY: `local` is our own writable buffer of `left` bytes; the kernel checks
        // the remote range and reports EFAULT rather than faulting.
        let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
        if n > 0 {
            done += n as usize;
            continue;
        }
        if n == 0 {
            break;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ENOSYS | libc::EPERM) => return (done, true),
            // EFAULT: unreadable from `addr + done` on (or memory it cannot pin).
            _ => break,
        }
    }
    (done, false)
}

/// How many bytes from `addr` (at most `len`) lie in consecutive readable mappings of a
/// `/proc/<pid>/maps` listing (`start-end perms ...`, ascending).
fn readable_prefix(maps: &str, addr: usize, len: usize) -> usize {
    let end = addr.saturating_add(len);
    let mut at = addr;
    for line in maps.lines() {
        let Some((range, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            continue;
        };
        if hi <= at {
            continue;
        }
        if lo > at || !rest.starts_with('r') {
            break;
        }
        at = hi;
        if at >= end {
            break;
        }
    }
    at.min(end) - addr
}

/// Memory at an address the application passed, whose extent only its header tells.
/// Every read goes through [`read_foreign`]; the last chunk read is kept, so a header walk
/// of many small fields costs few system calls.
struct ForeignBytes {
    base: usize,
    /// The readable prefix of a `FOREIGN_CHUNK`-byte read at `.0`.
    chunk: std::cell::RefCell<(u64, Vec<u8>)>,
}

impl ForeignBytes {
    fn new(base: usize) -> Self {
        Self {
            base,
            chunk: std::cell::RefCell::new((0, Vec::new())),
        }
    }

    fn unreadable(&self, what: &'static str, at: u64, end: u64) -> CodeObjectError {
        CodeObjectError::Unreadable {
            what,
            address: self.base,
            at,
            end,
        }
    }
}

impl ByteSource for ForeignBytes {
    fn read(&self, offset: u64, out: &mut [u8], what: &'static str) -> Result<()> {
        let end = offset.saturating_add(out.len() as u64);
        // A corrupt header must not steer reads across the address space.
        if end > MAX_BUNDLE_SIZE {
            return Err(corrupt(format!(
                "{what} would lie at byte {offset}, beyond the {MAX_BUNDLE_SIZE} bytes an \
                 image may have"
            )));
        }
        // Lossless: offset < MAX_BUNDLE_SIZE; an address past the top is unreadable.
        let Some(addr) = self.base.checked_add(offset as usize) else {
            return Err(self.unreadable(what, offset, end));
        };
        if out.len() > FOREIGN_CHUNK {
            let needed = out.len();
            let n = read_foreign(addr, out, needed);
            return if n == out.len() {
                Ok(())
            } else {
                Err(self.unreadable(what, offset + n as u64, end))
            };
        }
        let mut chunk = self.chunk.borrow_mut();
        let covers = |c: &(u64, Vec<u8>)| offset >= c.0 && end <= c.0 + c.1.len() as u64;
        if !covers(&chunk) {
            chunk.1.resize(FOREIGN_CHUNK, 0);
            let needed = out.len();
            let n = read_foreign(addr, &mut chunk.1, needed);
            chunk.1.truncate(n);
            chunk.0 = offset;
            if !covers(&chunk) {
                return Err(self.unreadable(what, offset + n as u64, end));
            }
        }
        // In range: `covers` holds.
        let start = (offset - chunk.0) as usize;
        out.copy_from_slice(&chunk.1[start..start + out.len()]);
        Ok(())
    }
}

/// The `len` bytes at address `base`, read through [`read_foreign`] a step at a time, so
/// a header that overstates the length costs at most one step of allocation beyond the
/// bytes that exist.
fn copy_foreign(base: usize, len: u64, what: &'static str) -> Result<Vec<u8>> {
    if len > MAX_IMAGE_COPY {
        return Err(corrupt(format!(
            "{what} claims {len} bytes; an image without a length may have at most \
             {MAX_IMAGE_COPY} (load larger ones from a file with hipModuleLoad)"
        )));
    }
    let unreadable = |at: u64| CodeObjectError::Unreadable {
        what,
        address: base,
        at,
        end: len,
    };
    let mut out = Vec::new();
    while (out.len() as u64) < len {
        let done = out.len();
        // Lossless: both are at most COPY_STEP.
        let step = (len - done as u64).min(COPY_STEP) as usize;
        out.resize(done + step, 0);
        let Some(addr) = base.checked_add(done) else {
            return Err(unreadable(done as u64));
        };
        let n = read_foreign(addr, &mut out[done..], step);
        if n < step {
            return Err(unreadable((done + n) as u64));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Fat binary wrapper, images without a length, and bundle length.

#[repr(C)]
struct FatbinWrapper {
    magic: u32,
    version: u32,
    bundle: *const u8,
    reserved: *const c_void,
}

/// The bundle address a "HIPF" wrapper at offset 0 of `src` points to.
fn wrapper_bundle(src: &ForeignBytes) -> Result<usize> {
    let magic = src.u32_at(0, "fat binary wrapper magic")?;
    let version = src.u32_at(4, "fat binary wrapper version")?;
    if magic != HIP_FATBIN_MAGIC || version != HIP_FATBIN_VERSION {
        return Err(CodeObjectError::BadWrapper { magic, version });
    }
    let mut pointer = [0u8; std::mem::size_of::<usize>()];
    src.read(
        std::mem::offset_of!(FatbinWrapper, bundle) as u64,
        &mut pointer,
        "fat binary wrapper bundle pointer",
    )?;
    match usize::from_ne_bytes(pointer) {
        0 => Err(CodeObjectError::NullPointer("fat binary bundle")),
        bundle => Ok(bundle),
    }
}

/// A registered fat binary's offload bundle: memory the program owns (its `.hip_fatbin`
/// section) whose length only the bundle's header gives. Registering reads just the
/// header; loading reads the entry table and the one code object it needs, every byte
/// through [`read_foreign`]. So a header that overstates the bundle is an error when the
/// missing bytes are needed, and the code objects for other GPUs are never touched (AMD's
/// runtime, too, extracts only the matching entry).
#[derive(Debug)]
pub struct ForeignBundle {
    base: usize,
    len: u64,
}

impl ForeignBundle {
    /// Finds the offload bundle behind the pointer `__hipRegisterFatBinary` receives and
    /// works out its length from its header (the wrapper carries none).
    ///
    /// # Safety
    /// `wrapper` may be any pointer: every read is checked (module comment above
    /// `FOREIGN_CHUNK`). Only where neither process_vm_readv nor /proc/self/maps can be
    /// used must it be null or point to a well-formed wrapper and bundle.
    pub unsafe fn from_wrapper(wrapper: *const c_void) -> Result<Self> {
        if wrapper.is_null() {
            return Err(CodeObjectError::NullPointer("fat binary wrapper"));
        }
        let base = wrapper_bundle(&ForeignBytes::new(wrapper as usize))?;
        let len = bundle_length(&ForeignBytes::new(base))?;
        Ok(Self { base, len })
    }

    /// The bundle's length as its header gives it.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: a bundle has at least its magic and entry count.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The code object for an agent (the rules of [`select_code_object`]), copied out of
    /// the bundle. A compressed bundle is copied whole and decompressed.
    pub fn code_object_for(&self, agent_isa: &str) -> Result<Vec<u8>> {
        let src = ForeignBytes::new(self.base);
        let mut magic = [0u8; 4];
        src.read(0, &mut magic, "bundle magic")?;
        if &magic == CCOB_MAGIC {
            let bytes = copy_foreign(self.base, self.len, "compressed offload bundle")?;
            let entries = parse_bundle(&bytes)?;
            return Ok(select_code_object(&entries, agent_isa)?.data.to_vec());
        }
        let index = index_bundle(&src, self.len)?;
        let entry = select_by(&index, agent_isa, |e| (e.target.as_ref(), e.size != 0))?;
        // Lossless and in range: offset + size <= len <= MAX_BUNDLE_SIZE.
        let start =
            self.base
                .checked_add(entry.offset as usize)
                .ok_or(CodeObjectError::Unreadable {
                    what: "code object",
                    address: self.base,
                    at: entry.offset,
                    end: entry.offset + entry.size,
                })?;
        copy_foreign(start, entry.size, "code object")
    }
}

/// The code image at `image` as `hipModuleLoadData` receives it, with no length: an ELF
/// code object (its extent from the ELF headers, [`elf_extent`]), an offload bundle
/// (compressed or not), or a fat-binary wrapper (`HIPF`, as `__hipRegisterFatBinary`
/// gets). Returns a copy of exactly the image; bytes the headers claim but that are not
/// readable memory are [`CodeObjectError::Unreadable`], never a fault.
///
/// # Safety
/// As for [`ForeignBundle::from_wrapper`]: any pointer, except where the checks are
/// unavailable.
pub unsafe fn image_from_memory(image: *const c_void) -> Result<Vec<u8>> {
    if image.is_null() {
        return Err(CodeObjectError::NullPointer("code image"));
    }
    let src = ForeignBytes::new(image as usize);
    let mut magic = [0u8; 4];
    src.read(0, &mut magic, "image magic")?;
    if u32::from_le_bytes(magic) == HIP_FATBIN_MAGIC {
        let bundle = wrapper_bundle(&src)?;
        let len = bundle_length(&ForeignBytes::new(bundle))?;
        return copy_foreign(bundle, len, "offload bundle");
    }
    if &magic == ELF_MAGIC {
        return copy_foreign(image as usize, elf_extent(&src)?, "code object");
    }
    copy_foreign(image as usize, bundle_length(&src)?, "offload bundle")
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// The extent of an ELF64 file from its headers alone: the furthest end of the program
/// header table, each segment's file bytes, the section header table and each section's
/// file bytes (all of which [`read_code_object`] checks are present).
fn elf_extent(src: &(impl ByteSource + ?Sized)) -> Result<u64> {
    const ELFCLASS64: u8 = 2;
    const ELFDATA2LSB: u8 = 1;
    const EHDR_SIZE: u64 = 64;
    const PHDR_SIZE: u64 = 56;
    const SHDR_SIZE: u64 = 64;
    const SHT_NOBITS: u32 = 8;
    let mut ident = [0u8; 16];
    src.read(0, &mut ident, "ELF identification")?;
    if ident[4] != ELFCLASS64 || ident[5] != ELFDATA2LSB {
        return Err(CodeObjectError::NotAmdgpuElf(format!(
            "class {} data {}: not a little-endian ELF64 file",
            ident[4], ident[5]
        )));
    }
    let phoff = src.u64_at(32, "e_phoff")?;
    let shoff = src.u64_at(40, "e_shoff")?;
    let phentsize = u64::from(src.u16_at(54, "e_phentsize")?);
    let phnum = u64::from(src.u16_at(56, "e_phnum")?);
    let shentsize = u64::from(src.u16_at(58, "e_shentsize")?);
    let mut shnum = u64::from(src.u16_at(60, "e_shnum")?);

    let mut end = EHDR_SIZE;
    let mut extend = |start: u64, size: u64, what: &str| -> Result<()> {
        match start.checked_add(size) {
            Some(e) if e <= MAX_BUNDLE_SIZE => {
                end = end.max(e);
                Ok(())
            }
            _ => Err(corrupt(format!(
                "ELF {what} at {start}+{size} ends beyond the {MAX_BUNDLE_SIZE} bytes an \
                 image may have"
            ))),
        }
    };
    if phnum > 0 {
        if phentsize < PHDR_SIZE {
            return Err(CodeObjectError::NotAmdgpuElf(format!(
                "e_phentsize {phentsize} is smaller than an ELF64 program header"
            )));
        }
        // phnum and phentsize are u16s: the product cannot overflow.
        extend(phoff, phnum * phentsize, "program header table")?;
        for i in 0..phnum {
            // In range: the table lies below MAX_BUNDLE_SIZE (checked just above).
            let ph = phoff + i * phentsize;
            let offset = src.u64_at(ph + 8, "p_offset")?;
            let filesz = src.u64_at(ph + 32, "p_filesz")?;
            extend(offset, filesz, "segment")?;
        }
    }
    if shoff != 0 {
        if shentsize < SHDR_SIZE {
            return Err(CodeObjectError::NotAmdgpuElf(format!(
                "e_shentsize {shentsize} is smaller than an ELF64 section header"
            )));
        }
        if shnum == 0 {
            // Extended numbering: the section count is section 0's sh_size.
            extend(shoff, SHDR_SIZE, "section header 0")?;
            shnum = src.u64_at(shoff + 32, "section count (sh_size of section 0)")?;
            if shnum > MAX_ELF_SECTIONS {
                return Err(corrupt(format!(
                    "{shnum} ELF sections (more than {MAX_ELF_SECTIONS})"
                )));
            }
        }
        // At most 2^20 * 65535: no overflow.
        extend(shoff, shnum * shentsize, "section header table")?;
        for i in 0..shnum {
            let sh = shoff + i * shentsize;
            if src.u32_at(sh + 4, "sh_type")? != SHT_NOBITS {
                let offset = src.u64_at(sh + 24, "sh_offset")?;
                let size = src.u64_at(sh + 32, "sh_size")?;
                extend(offset, size, "section")?;
            }
        }
    }
    Ok(end)
}

/// One entry of an uncompressed bundle's header, not yet checked against the data length.
struct RawEntry {
    offset: u64,
    size: u64,
    id_offset: u64,
    id_len: u64,
}

/// Reads the entry table of an uncompressed bundle. Returns the entries and the end of
/// the header.
fn read_bundle_header(src: &(impl ByteSource + ?Sized)) -> Result<(Vec<RawEntry>, u64)> {
    let mut magic = [0u8; 24];
    src.read(0, &mut magic, "bundle magic")?;
    if &magic != BUNDLE_MAGIC {
        return Err(CodeObjectError::UnknownBundleFormat {
            magic: [magic[0], magic[1], magic[2], magic[3]],
        });
    }
    let count = src.u64_at(24, "bundle entry count")?;
    if count > MAX_BUNDLE_ENTRIES {
        return Err(corrupt(format!(
            "{count} entries (more than {MAX_BUNDLE_ENTRIES})"
        )));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut pos: u64 = 32;
    for _ in 0..count {
        let offset = src.u64_at(pos, "bundle entry offset")?;
        let size = src.u64_at(pos + 8, "bundle entry size")?;
        let id_len = src.u64_at(pos + 16, "bundle entry id length")?;
        if id_len > MAX_ENTRY_ID_LEN {
            return Err(corrupt(format!("entry id of {id_len} bytes")));
        }
        entries.push(RawEntry {
            offset,
            size,
            id_offset: pos + 24,
            id_len,
        });
        // Cannot overflow: pos grows by at most 24 + 4096 per entry, 4096 entries.
        pos += 24 + id_len;
    }
    Ok((entries, pos))
}

/// Total length of an offload bundle, compressed or not, from its header alone.
fn bundle_length(src: &(impl ByteSource + ?Sized)) -> Result<u64> {
    let mut magic = [0u8; 4];
    src.read(0, &mut magic, "bundle magic")?;
    if &magic == CCOB_MAGIC {
        let header = read_ccob_header(src)?;
        return ccob_length(src, &header);
    }
    let (entries, header_end) = read_bundle_header(src)?;
    let mut end = header_end;
    for e in &entries {
        let entry_end = e
            .offset
            .checked_add(e.size)
            .ok_or_else(|| corrupt("entry offset + size overflows"))?;
        end = end.max(entry_end);
    }
    if end > MAX_BUNDLE_SIZE {
        return Err(corrupt(format!("bundle claims {end} bytes")));
    }
    Ok(end)
}

/// The fixed header of a compressed bundle, normalised across versions.
#[derive(Debug)]
struct CcobHeader {
    version: u16,
    method: u16,
    header_len: u64,
    /// Total length including the header (v2 and later).
    file_size: Option<u64>,
    uncompressed_size: u64,
}

fn read_ccob_header(src: &(impl ByteSource + ?Sized)) -> Result<CcobHeader> {
    let version = src.u16_at(4, "CCOB version")?;
    let method = src.u16_at(6, "CCOB method")?;
    let (header_len, file_size, uncompressed_size) = match version {
        1 => (
            20,
            None,
            u64::from(src.u32_at(8, "CCOB uncompressed size")?),
        ),
        2 => (
            24,
            Some(u64::from(src.u32_at(8, "CCOB file size")?)),
            u64::from(src.u32_at(12, "CCOB uncompressed size")?),
        ),
        3 => (
            32,
            Some(src.u64_at(8, "CCOB file size")?),
            src.u64_at(16, "CCOB uncompressed size")?,
        ),
        v => {
            return Err(CodeObjectError::Unsupported(format!(
                "compressed offload bundle version {v} (known: 1, 2, 3)"
            )))
        }
    };
    // The hash is the last header field; reading it proves the header is complete.
    src.u64_at(header_len - 8, "CCOB hash")?;
    if method != CCOB_METHOD_ZLIB && method != CCOB_METHOD_ZSTD {
        return Err(corrupt(format!(
            "compressed bundle method {method} (0 = zlib, 1 = zstd)"
        )));
    }
    if let Some(size) = file_size {
        if size < header_len || size > MAX_BUNDLE_SIZE {
            return Err(corrupt(format!(
                "compressed bundle v{version} total size {size}"
            )));
        }
    }
    if uncompressed_size > MAX_BUNDLE_SIZE {
        return Err(corrupt(format!(
            "compressed bundle claims {uncompressed_size} uncompressed bytes"
        )));
    }
    Ok(CcobHeader {
        version,
        method,
        header_len,
        file_size,
        uncompressed_size,
    })
}

fn ccob_length(src: &(impl ByteSource + ?Sized), header: &CcobHeader) -> Result<u64> {
    if let Some(size) = header.file_size {
        return Ok(size);
    }
    // Version 1 records no total size: the payload's own framing says where it ends.
    if header.method != CCOB_METHOD_ZSTD {
        return Err(CodeObjectError::Unsupported(
            "zlib-compressed offload bundle (CCOB v1, method 0): this build decompresses \
             zstd only"
                .into(),
        ));
    }
    let frame = zstd_frame_length(src, header.header_len)?;
    Ok(header.header_len + frame)
}

/// Length of the single zstd frame starting at `start`, found by walking its header and
/// block headers (RFC 8878 §3.1.1) without decompressing.
fn zstd_frame_length(src: &(impl ByteSource + ?Sized), start: u64) -> Result<u64> {
    const ZSTD_MAGIC: u32 = 0xFD2F_B528;
    if src.u32_at(start, "zstd frame magic")? != ZSTD_MAGIC {
        return Err(corrupt("compressed payload is not a zstd frame"));
    }
    let mut fhd = [0u8];
    src.read(start + 4, &mut fhd, "zstd frame header")?;
    let fhd = fhd[0];
    let single_segment = fhd & 0x20 != 0;
    let has_checksum = fhd & 0x04 != 0;
    let dict_id_len = [0u64, 1, 2, 4][usize::from(fhd & 0x03)];
    let fcs_len = match fhd >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let window_len = if single_segment { 0 } else { 1 };
    let mut pos = start + 5 + window_len + dict_id_len + fcs_len;
    for _ in 0..MAX_ZSTD_BLOCKS {
        let mut bh = [0u8; 3];
        src.read(pos, &mut bh, "zstd block header")?;
        let bh = u32::from_le_bytes([bh[0], bh[1], bh[2], 0]);
        let last = bh & 1 != 0;
        let block_type = (bh >> 1) & 3;
        let block_size = u64::from(bh >> 3);
        let content = match block_type {
            0 | 2 => block_size, // raw, compressed
            1 => 1,              // RLE: one byte repeated block_size times
            _ => return Err(corrupt("reserved zstd block type")),
        };
        pos += 3 + content;
        if last {
            if has_checksum {
                pos += 4;
            }
            // Make sure the frame's last byte exists (readable, for memory of unknown extent).
            let mut b = [0u8];
            src.read(pos - 1, &mut b, "zstd frame")?;
            return Ok(pos - start);
        }
    }
    Err(corrupt("zstd frame has too many blocks"))
}

// ---------------------------------------------------------------------------------------
// Bundle entries.

/// One code object (or the empty host entry) of an offload bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The bundle entry id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub id: String,
    /// The GPU target for HIP device entries (`hip`/`hipv4` kind, `amdgcn-amd-amdhsa`);
    /// `None` for the host entry and anything else.
    pub target: Option<TargetId>,
    /// The code object ELF; borrowed from an uncompressed bundle, owned when decompressed.
    pub data: Cow<'a, [u8]>,
}

impl BundleEntry<'_> {
    /// The offload kind: the id up to its first `-` (`hipv4`, `hip`, `host`, ...).
    pub fn kind(&self) -> &str {
        self.id.split('-').next().unwrap_or("")
    }

    /// The target as an HSA ISA name (`amdgcn-amd-amdhsa--gfx942:sramecc+`), if any.
    pub fn isa_name(&self) -> Option<String> {
        self.target.as_ref().map(TargetId::isa_name)
    }
}

/// Splits an offload bundle into its entries. Handles both the uncompressed form and
/// `CCOB` (decompressing zstd; zlib is reported as [`CodeObjectError::Unsupported`]).
/// The slice may extend past the bundle (trailing bytes are ignored).
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<BundleEntry<'_>>> {
    if bytes.starts_with(CCOB_MAGIC) {
        let decompressed = decompress_ccob(bytes)?;
        let entries = parse_uncompressed(&decompressed)?;
        return Ok(entries
            .into_iter()
            .map(|e| BundleEntry {
                id: e.id,
                target: e.target,
                data: Cow::Owned(e.data.into_owned()),
            })
            .collect());
    }
    parse_uncompressed(bytes)
}

fn decompress_ccob(bytes: &[u8]) -> Result<Vec<u8>> {
    let header = read_ccob_header(bytes)?;
    let total = ccob_length(bytes, &header)?;
    if total > bytes.len() as u64 {
        return Err(CodeObjectError::Truncated {
            what: "compressed bundle",
            end: total,
            len: bytes.len() as u64,
        });
    }
    if header.method == CCOB_METHOD_ZLIB {
        return Err(CodeObjectError::Unsupported(format!(
            "zlib-compressed offload bundle (CCOB v{}, method 0): this build decompresses \
             zstd only; rebuild the program with a zstd-enabled clang or without \
             --offload-compress",
            header.version
        )));
    }
    // In range: header_len <= total <= bytes.len().
    let payload = &bytes[header.header_len as usize..total as usize];
    let expected = header.uncompressed_size;
    let limit = (payload.len() as u64)
        .saturating_mul(MAX_EXPANSION)
        .max(MIN_DECOMPRESSED_LIMIT);
    if expected > limit {
        return Err(corrupt(format!(
            "compressed bundle claims {expected} bytes from {} compressed bytes (more than \
             {MAX_EXPANSION}:1, or {MIN_DECOMPRESSED_LIMIT} bytes, is refused)",
            payload.len()
        )));
    }
    let decoder = zstd::stream::read::Decoder::with_buffer(payload)
        .map_err(|e| CodeObjectError::Decompress(e.to_string()))?
        .single_frame();
    // Grow as data arrives instead of trusting the header with a large up-front allocation;
    // read one byte more than promised so an oversize payload is detected.
    let mut out = Vec::with_capacity(expected.min(64 << 20) as usize);
    decoder
        .take(expected + 1)
        .read_to_end(&mut out)
        .map_err(|e| CodeObjectError::Decompress(e.to_string()))?;
    if out.len() as u64 != expected {
        return Err(CodeObjectError::Decompress(format!(
            "header promises {expected} bytes, payload holds {}{}",
            if out.len() as u64 > expected {
                "more than "
            } else {
                ""
            },
            out.len().min(expected as usize)
        )));
    }
    Ok(out)
}

fn parse_uncompressed(bytes: &[u8]) -> Result<Vec<BundleEntry<'_>>> {
    Ok(index_bundle(bytes, bytes.len() as u64)?
        .into_iter()
        .map(|e| BundleEntry {
            // In range: index_bundle checked offset + size <= bytes.len().
            data: Cow::Borrowed(&bytes[e.offset as usize..(e.offset + e.size) as usize]),
            id: e.id,
            target: e.target,
        })
        .collect())
}

/// An entry of an uncompressed bundle, checked to lie inside the bundle, without its data.
struct EntryIndex {
    id: String,
    target: Option<TargetId>,
    offset: u64,
    size: u64,
}

/// The entries of the uncompressed bundle of `len` bytes at the start of `src`.
fn index_bundle(src: &(impl ByteSource + ?Sized), len: u64) -> Result<Vec<EntryIndex>> {
    let (raw, _) = read_bundle_header(src)?;
    raw.into_iter()
        .map(|e| {
            // Cannot overflow: both are bounded by the header walk's limits.
            let id_end = e.id_offset + e.id_len;
            if id_end > len {
                return Err(CodeObjectError::Truncated {
                    what: "bundle entry id",
                    end: id_end,
                    len,
                });
            }
            // At most MAX_ENTRY_ID_LEN bytes.
            let mut id = vec![0; e.id_len as usize];
            src.read(e.id_offset, &mut id, "bundle entry id")?;
            let id = String::from_utf8(id).map_err(|_| corrupt("bundle entry id is not UTF-8"))?;
            let end = e
                .offset
                .checked_add(e.size)
                .ok_or_else(|| corrupt(format!("entry {id}: offset + size overflows")))?;
            if end > len {
                return Err(CodeObjectError::Truncated {
                    what: "bundle entry data",
                    end,
                    len,
                });
            }
            let target = target_of_entry_id(&id)?;
            Ok(EntryIndex {
                id,
                target,
                offset: e.offset,
                size: e.size,
            })
        })
        .collect()
}

/// `<kind>-<arch>-<vendor>-<os>-<env>-<target id>`: HIP device entries yield a target.
/// Entries of other kinds or triples (the host entry, OpenMP, ...) are kept but yield none.
fn target_of_entry_id(id: &str) -> Result<Option<TargetId>> {
    let Some((kind, rest)) = id.split_once('-') else {
        return Ok(None);
    };
    if !matches!(kind, "hip" | "hipv4") || !rest.starts_with("amdgcn-amd-amdhsa-") {
        return Ok(None);
    }
    TargetId::parse(rest)
        .map(Some)
        .map_err(|e| corrupt(format!("bundle entry {id}: {e}")))
}

// ---------------------------------------------------------------------------------------
// Target ids.

/// An AMDGPU target id: processor plus the two target features a code object may pin
/// (AMDGPUUsage "Target ID"). `None` means "any" in a code object, "not reported" for an
/// agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetId {
    pub processor: String,
    pub sramecc: Option<bool>,
    pub xnack: Option<bool>,
}

impl TargetId {
    /// Parses a bare target id (`gfx90a:xnack-`) or a full HSA ISA name
    /// (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`).
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |why: &str| CodeObjectError::InvalidTargetId(format!("{s:?}: {why}"));
        let target = if s.starts_with("amdgcn-") {
            // The triple has four components (the environment is empty for amdhsa), so the
            // target id is everything after the fourth '-'; it may itself contain '-'
            // (`gfx9-generic`).
            let mut dashes = s.match_indices('-').map(|(i, _)| i);
            let fourth = dashes.nth(3).ok_or_else(|| bad("triple too short"))?;
            let triple = &s[..fourth];
            if !triple.starts_with("amdgcn-amd-amdhsa") {
                return Err(bad("not an amdgcn-amd-amdhsa target"));
            }
            &s[fourth + 1..]
        } else {
            s
        };
        let mut parts = target.split(':');
        let processor = parts.next().unwrap_or("");
        if processor.is_empty()
            || !processor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(bad("missing or malformed processor name"));
        }
        let mut id = TargetId {
            processor: processor.to_owned(),
            sramecc: None,
            xnack: None,
        };
        for feature in parts {
            let (name, on) = if let Some(name) = feature.strip_suffix('+') {
                (name, true)
            } else if let Some(name) = feature.strip_suffix('-') {
                (name, false)
            } else {
                return Err(bad("a feature must end in '+' or '-'"));
            };
            let slot = match name {
                "sramecc" => &mut id.sramecc,
                "xnack" => &mut id.xnack,
                _ => return Err(bad("unknown feature (known: sramecc, xnack)")),
            };
            if slot.replace(on).is_some() {
                return Err(bad("feature given twice"));
            }
        }
        Ok(id)
    }

    /// Whether a code object built for `self` runs on an agent whose ISA is `agent`: same
    /// processor, and every feature the code object pins has the agent's setting.
    pub fn runs_on(&self, agent: &TargetId) -> bool {
        fn feature_ok(code: Option<bool>, agent: Option<bool>) -> bool {
            code.is_none() || code == agent
        }
        self.processor == agent.processor
            && feature_ok(self.sramecc, agent.sramecc)
            && feature_ok(self.xnack, agent.xnack)
    }

    /// How many features are pinned: among compatible code objects, the most specific is
    /// built for exactly this configuration and is preferred.
    pub fn specificity(&self) -> u32 {
        u32::from(self.sramecc.is_some()) + u32::from(self.xnack.is_some())
    }

    /// The HSA ISA name form, e.g. `amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub fn isa_name(&self) -> String {
        format!("amdgcn-amd-amdhsa--{self}")
    }
}

impl fmt::Display for TargetId {
    /// The canonical target id (features in alphabetical order, as clang writes them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        let sign = |on: bool| if on { '+' } else { '-' };
        if let Some(on) = self.sramecc {
            write!(f, ":sramecc{}", sign(on))?;
        }
        if let Some(on) = self.xnack {
            write!(f, ":xnack{}", sign(on))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for TargetId {
    type Err = CodeObjectError;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

/// Picks the code object for an agent, given its HSA ISA name
/// (`HSA_ISA_INFO_NAME`, e.g. `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`).
///
/// Only HIP device entries with a non-empty code object are candidates. Among those that
/// run on the agent ([`TargetId::runs_on`]) the most specific wins; ties go to the first.
/// With no candidate the error is [`CodeObjectError::NoBinaryForGpu`], naming the agent and
/// every GPU ISA the bundle holds.
pub fn select_code_object<'e, 'a>(
    entries: &'e [BundleEntry<'a>],
    agent_isa: &str,
) -> Result<&'e BundleEntry<'a>> {
    select_by(entries, agent_isa, |e| {
        (e.target.as_ref(), !e.data.is_empty())
    })
}

/// [`select_code_object`] over any entry type: `describe` gives an entry's target and
/// whether it holds a code object.
fn select_by<'e, E>(
    entries: &'e [E],
    agent_isa: &str,
    describe: impl Fn(&E) -> (Option<&TargetId>, bool),
) -> Result<&'e E> {
    let agent = TargetId::parse(agent_isa)?;
    let mut best: Option<(&'e E, u32)> = None;
    for entry in entries {
        let (Some(target), true) = describe(entry) else {
            continue;
        };
        if !target.runs_on(&agent) {
            continue;
        }
        let score = target.specificity();
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((entry, score));
        }
    }
    best.map(|(e, _)| e)
        .ok_or_else(|| CodeObjectError::NoBinaryForGpu {
            agent: agent_isa.to_owned(),
            available: entries
                .iter()
                .filter_map(|e| describe(e).0.map(TargetId::isa_name))
                .collect(),
        })
}

// ---------------------------------------------------------------------------------------
// Kernel metadata.

/// What the runtime needs to know about one code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObjectInfo {
    /// 3, 4, 5 or 6: from `amdhsa.version`, else from `e_ident[EI_ABIVERSION]`.
    pub code_object_version: u32,
    /// ISA name, e.g. `amdgcn-amd-amdhsa--gfx942`: `amdhsa.target` if present, else derived
    /// from the ELF `e_flags`.
    pub target: String,
    pub kernels: Vec<KernelInfo>,
}

impl CodeObjectInfo {
    /// The kernel whose `.name` (the mangled function name clang registers) is `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// One kernel's entry in `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// `.name`: the source-level (mangled) kernel name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol, `<name>.kd`.
    pub symbol: String,
    /// `.kernarg_segment_size`: bytes of kernarg memory, hidden arguments included.
    pub kernarg_size: u32,
    /// `.kernarg_segment_align`: required alignment of the kernarg segment (power of 2).
    pub kernarg_align: u32,
    /// `.group_segment_fixed_size`: static LDS bytes (dynamic LDS comes on top).
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// `.max_flat_workgroup_size`; 1024 (LLVM's default for HIP) when absent.
    pub max_flat_workgroup_size: u32,
    /// `.wavefront_size`: 32 or 64.
    pub wavefront_size: u32,
    /// `.uses_dynamic_stack` (v5+); false when absent.
    pub uses_dynamic_stack: bool,
    /// `.sgpr_count`: scalar registers per wave; 0 when absent.
    pub sgpr_count: u32,
    /// `.vgpr_count`: vector registers per work-item (ArchVGPRs); 0 when absent.
    pub vgpr_count: u32,
    /// `.agpr_count`: accumulation registers per work-item (gfx90a+); 0 when absent.
    pub agpr_count: u32,
    /// `.args`, in kernarg order: explicit arguments first, then hidden ones.
    pub args: Vec<KernelArg>,
}

impl KernelInfo {
    /// Number of arguments the application passes (HIP's `void **args` has one pointer
    /// per explicit argument, in order).
    pub fn explicit_arg_count(&self) -> usize {
        self.args.iter().filter(|a| !a.kind.is_hidden()).count()
    }
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// `.offset`: byte offset in the kernarg segment.
    pub offset: u32,
    /// `.size`: bytes.
    pub size: u32,
    /// `.value_kind`.
    pub kind: ArgKind,
}

/// `.value_kind` of a kernel argument (AMDGPUUsage, code object v3/v4 table plus the v5
/// additions). Every kind except `hidden_*` is an explicit argument the application passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgKind {
    /// `by_value`
    ByValue,
    /// `global_buffer`
    GlobalBuffer,
    /// `dynamic_shared_pointer`
    DynamicSharedPointer,
    /// `image`
    Image,
    /// `sampler`
    Sampler,
    /// `pipe`
    Pipe,
    /// `queue`
    Queue,
    /// `hidden_*`: filled by the runtime, not passed by the application.
    Hidden(HiddenArg),
}

impl ArgKind {
    pub fn is_hidden(&self) -> bool {
        matches!(self, ArgKind::Hidden(_))
    }

    fn parse(kind: &str) -> Result<Self> {
        Ok(match kind {
            "by_value" => ArgKind::ByValue,
            "global_buffer" => ArgKind::GlobalBuffer,
            "dynamic_shared_pointer" => ArgKind::DynamicSharedPointer,
            "image" => ArgKind::Image,
            "sampler" => ArgKind::Sampler,
            "pipe" => ArgKind::Pipe,
            "queue" => ArgKind::Queue,
            hidden if hidden.starts_with("hidden_") => ArgKind::Hidden(HiddenArg::parse(hidden)),
            // Guessing whether an unknown kind is explicit would shift every later
            // argument, so refuse the kernel instead.
            other => {
                return Err(CodeObjectError::BadMetadata(format!(
                    "unknown argument value_kind {other:?}"
                )))
            }
        })
    }
}

/// The hidden (implicit) arguments, by `.value_kind` name (AMDGPUUsage).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HiddenArg {
    /// `hidden_global_offset_{x,y,z}` (v3+): the grid's global offset; HIP always uses 0.
    GlobalOffsetX,
    GlobalOffsetY,
    GlobalOffsetZ,
    /// `hidden_block_count_{x,y,z}` (v5): work-groups per dimension.
    BlockCountX,
    BlockCountY,
    BlockCountZ,
    /// `hidden_group_size_{x,y,z}` (v5): work-group size per dimension (u16).
    GroupSizeX,
    GroupSizeY,
    GroupSizeZ,
    /// `hidden_remainder_{x,y,z}` (v5): size of the partial last work-group (u16), 0 if none.
    RemainderX,
    RemainderY,
    RemainderZ,
    /// `hidden_grid_dims` (v5): number of grid dimensions (u16).
    GridDims,
    /// `hidden_heap_v1` (v5): device malloc heap.
    HeapV1,
    /// `hidden_hostcall_buffer`
    HostcallBuffer,
    /// `hidden_printf_buffer`
    PrintfBuffer,
    /// `hidden_multigrid_sync_arg`
    MultigridSyncArg,
    /// `hidden_default_queue` (device enqueue)
    DefaultQueue,
    /// `hidden_completion_action` (device enqueue)
    CompletionAction,
    /// `hidden_dynamic_lds_size` (v5): dynamic LDS bytes of the launch.
    DynamicLdsSize,
    /// `hidden_private_base` (v5, targets without aperture registers)
    PrivateBase,
    /// `hidden_shared_base` (v5, targets without aperture registers)
    SharedBase,
    /// `hidden_queue_ptr` (v5): address of the dispatching `hsa_queue_t`, listed when the
    /// kernel needs the queue pointer.
    QueuePtr,
    /// `hidden_none`: reserved space that must read 0.
    None,
    /// A `hidden_*` kind this code does not know; it reads 0.
    Unknown(String),
}

impl HiddenArg {
    fn parse(kind: &str) -> Self {
        match kind {
            "hidden_global_offset_x" => Self::GlobalOffsetX,
            "hidden_global_offset_y" => Self::GlobalOffsetY,
            "hidden_global_offset_z" => Self::GlobalOffsetZ,
            "hidden_block_count_x" => Self::BlockCountX,
            "hidden_block_count_y" => Self::BlockCountY,
            "hidden_block_count_z" => Self::BlockCountZ,
            "hidden_group_size_x" => Self::GroupSizeX,
            "hidden_group_size_y" => Self::GroupSizeY,
            "hidden_group_size_z" => Self::GroupSizeZ,
            "hidden_remainder_x" => Self::RemainderX,
            "hidden_remainder_y" => Self::RemainderY,
            "hidden_remainder_z" => Self::RemainderZ,
            "hidden_grid_dims" => Self::GridDims,
            "hidden_heap_v1" => Self::HeapV1,
            "hidden_hostcall_buffer" => Self::HostcallBuffer,
            "hidden_printf_buffer" => Self::PrintfBuffer,
            "hidden_multigrid_sync_arg" => Self::MultigridSyncArg,
            "hidden_default_queue" => Self::DefaultQueue,
            "hidden_completion_action" => Self::CompletionAction,
            "hidden_dynamic_lds_size" => Self::DynamicLdsSize,
            "hidden_private_base" => Self::PrivateBase,
            "hidden_shared_base" => Self::SharedBase,
            "hidden_queue_ptr" => Self::QueuePtr,
            "hidden_none" => Self::None,
            other => Self::Unknown(other.to_owned()),
        }
    }
}

/// Reads an AMDGPU code object's metadata note (code object v3 to v6).
pub fn read_code_object(elf: &[u8]) -> Result<CodeObjectInfo> {
    let not_elf = |e: object::Error| CodeObjectError::NotAmdgpuElf(e.to_string());
    let header = FileHeader64::<Endianness>::parse(elf).map_err(not_elf)?;
    let endian = header.endian().map_err(not_elf)?;
    let machine = header.e_machine(endian);
    if machine != EM_AMDGPU {
        return Err(CodeObjectError::NotAmdgpuElf(format!(
            "e_machine is {machine}, not EM_AMDGPU ({EM_AMDGPU})"
        )));
    }
    let flags = header.e_flags(endian);
    let abi_version = header.e_ident().abi_version;
    check_complete(header, endian, elf)?;

    let desc = find_metadata_note(header, endian, elf)?.ok_or(CodeObjectError::MissingMetadata)?;
    let root = rmpv::decode::read_value_with_max_depth(&mut &desc[..], MAX_METADATA_DEPTH)
        .map_err(|e| CodeObjectError::BadMetadata(format!("msgpack: {e}")))?;
    let root = as_map(&root, "metadata root")?;

    let code_object_version = match get(root, "amdhsa.version") {
        Some(v) => version_from_metadata(v)?,
        // ELFABIVERSION_AMDGPU_HSA_V3 = 1 ... V6 = 4.
        None if abi_version >= ELFABIVERSION_AMDGPU_HSA_V3 => u32::from(abi_version) + 2,
        None => return Err(CodeObjectError::BadMetadata("no amdhsa.version".into())),
    };
    let target = match get(root, "amdhsa.target") {
        Some(v) => v
            .as_str()
            .ok_or_else(|| CodeObjectError::BadMetadata("amdhsa.target is not a string".into()))?
            .to_owned(),
        None => target_from_e_flags(flags, abi_version)?.isa_name(),
    };
    let kernels = match get(root, "amdhsa.kernels") {
        Some(v) => v
            .as_array()
            .ok_or_else(|| CodeObjectError::BadMetadata("amdhsa.kernels is not an array".into()))?
            .iter()
            .map(kernel_from_metadata)
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    Ok(CodeObjectInfo {
        code_object_version,
        target,
        kernels,
    })
}

/// Checks that the section header table and every segment's file bytes lie inside `elf`,
/// so a truncated code object is reported here rather than by the HSA loader later.
fn check_complete(header: &FileHeader64<Endianness>, endian: Endianness, elf: &[u8]) -> Result<()> {
    let truncated = |e: object::Error| CodeObjectError::NotAmdgpuElf(format!("truncated: {e}"));
    let sections = header.sections(endian, elf).map_err(truncated)?;
    for section in sections.iter() {
        // SHT_NOBITS sections (.bss) have no file bytes; `data` returns empty for them.
        section.data(endian, elf).map_err(truncated)?;
    }
    for ph in header.program_headers(endian, elf).map_err(truncated)? {
        ph.data(endian, elf)
            .map_err(|()| CodeObjectError::NotAmdgpuElf("truncated: segment data".into()))?;
    }
    Ok(())
}

/// The descriptor of the `AMDGPU`/`NT_AMDGPU_METADATA` note: from PT_NOTE segments (what
/// a loader sees), else from SHT_NOTE sections (relocatable objects have no segments).
fn find_metadata_note<'d>(
    header: &FileHeader64<Endianness>,
    endian: Endianness,
    elf: &'d [u8],
) -> Result<Option<&'d [u8]>> {
    let bad = |e: object::Error| CodeObjectError::NotAmdgpuElf(e.to_string());
    let matches = |note: &object::read::elf::Note<'d, FileHeader64<Endianness>>| {
        note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA
    };
    for ph in header.program_headers(endian, elf).map_err(bad)? {
        if let Some(mut notes) = ph.notes(endian, elf).map_err(bad)? {
            while let Some(note) = notes.next().map_err(bad)? {
                if matches(&note) {
                    return Ok(Some(note.desc()));
                }
            }
        }
    }
    let sections = header.sections(endian, elf).map_err(bad)?;
    for section in sections.iter() {
        if let Some(mut notes) = section.notes(endian, elf).map_err(bad)? {
            while let Some(note) = notes.next().map_err(bad)? {
                if matches(&note) {
                    return Ok(Some(note.desc()));
                }
            }
        }
    }
    Ok(None)
}

fn version_from_metadata(v: &Value) -> Result<u32> {
    let bad = || CodeObjectError::BadMetadata(format!("amdhsa.version {v} is not [major, minor]"));
    let parts = v.as_array().ok_or_else(bad)?;
    let major = parts.first().and_then(Value::as_u64).ok_or_else(bad)?;
    let minor = parts.get(1).and_then(Value::as_u64).ok_or_else(bad)?;
    match (major, minor) {
        (1, minor @ 0..=3) => Ok(minor as u32 + 3),
        _ => Err(CodeObjectError::Unsupported(format!(
            "code object metadata version {major}.{minor} (known: 1.0 to 1.3, i.e. v3 to v6)"
        ))),
    }
}

/// The target id recorded in the ELF header, for code objects whose note lacks
/// `amdhsa.target` (v3).
fn target_from_e_flags(flags: u32, abi_version: u8) -> Result<TargetId> {
    let mach = flags & EF_AMDGPU_MACH;
    let processor = processor_name(mach).ok_or_else(|| {
        CodeObjectError::NotAmdgpuElf(format!("unknown EF_AMDGPU_MACH value {mach:#x}"))
    })?;
    let (sramecc, xnack) = if abi_version > ELFABIVERSION_AMDGPU_HSA_V3 {
        let xnack = match flags & EF_AMDGPU_FEATURE_XNACK_V4 {
            EF_AMDGPU_FEATURE_XNACK_ON_V4 => Some(true),
            EF_AMDGPU_FEATURE_XNACK_OFF_V4 => Some(false),
            // ANY (0x100) and UNSUPPORTED (0) both mean "nothing pinned".
            _ => None,
        };
        let sramecc = match flags & EF_AMDGPU_FEATURE_SRAMECC_V4 {
            EF_AMDGPU_FEATURE_SRAMECC_ON_V4 => Some(true),
            EF_AMDGPU_FEATURE_SRAMECC_OFF_V4 => Some(false),
            _ => None,
        };
        (sramecc, xnack)
    } else {
        // V3 had single "enabled" bits and no way to say "any".
        let on = |bit: u32| (flags & bit != 0).then_some(true);
        (
            on(EF_AMDGPU_FEATURE_SRAMECC_V3),
            on(EF_AMDGPU_FEATURE_XNACK_V3),
        )
    };
    Ok(TargetId {
        processor: processor.to_owned(),
        sramecc,
        xnack,
    })
}

/// `EF_AMDGPU_MACH_AMDGCN_*` → processor name (LLVM 19 `BinaryFormat/ELF.h`).
fn processor_name(mach: u32) -> Option<&'static str> {
    Some(match mach {
        0x020 => "gfx600",
        0x021 => "gfx601",
        0x022 => "gfx700",
        0x023 => "gfx701",
        0x024 => "gfx702",
        0x025 => "gfx703",
        0x026 => "gfx704",
        0x028 => "gfx801",
        0x029 => "gfx802",
        0x02a => "gfx803",
        0x02b => "gfx810",
        0x02c => "gfx900",
        0x02d => "gfx902",
        0x02e => "gfx904",
        0x02f => "gfx906",
        0x030 => "gfx908",
        0x031 => "gfx909",
        0x032 => "gfx90c",
        0x033 => "gfx1010",
        0x034 => "gfx1011",
        0x035 => "gfx1012",
        0x036 => "gfx1030",
        0x037 => "gfx1031",
        0x038 => "gfx1032",
        0x039 => "gfx1033",
        0x03a => "gfx602",
        0x03b => "gfx705",
        0x03c => "gfx805",
        0x03d => "gfx1035",
        0x03e => "gfx1034",
        0x03f => "gfx90a",
        0x040 => "gfx940",
        0x041 => "gfx1100",
        0x042 => "gfx1013",
        0x043 => "gfx1150",
        0x044 => "gfx1103",
        0x045 => "gfx1036",
        0x046 => "gfx1101",
        0x047 => "gfx1102",
        0x048 => "gfx1200",
        0x04a => "gfx1151",
        0x04b => "gfx941",
        0x04c => "gfx942",
        0x04e => "gfx1201",
        0x051 => "gfx9-generic",
        0x052 => "gfx10-1-generic",
        0x053 => "gfx10-3-generic",
        0x054 => "gfx11-generic",
        0x055 => "gfx1152",
        0x059 => "gfx12-generic",
        _ => return None,
    })
}

fn kernel_from_metadata(v: &Value) -> Result<KernelInfo> {
    let map = as_map(v, "amdhsa.kernels entry")?;
    let name = get_str(map, ".name", "kernel")?;
    let ctx = name.as_str();
    let kernarg_size = get_u32(map, ".kernarg_segment_size", ctx)?;
    let kernarg_align = get_u32(map, ".kernarg_segment_align", ctx)?;
    if !kernarg_align.is_power_of_two() {
        return Err(CodeObjectError::BadMetadata(format!(
            "kernel {ctx}: .kernarg_segment_align {kernarg_align} is not a power of 2"
        )));
    }
    let args = match get(map, ".args") {
        Some(a) => a
            .as_array()
            .ok_or_else(|| {
                CodeObjectError::BadMetadata(format!("kernel {ctx}: .args is not an array"))
            })?
            .iter()
            .map(|a| arg_from_metadata(a, ctx, kernarg_size))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    Ok(KernelInfo {
        symbol: get_str(map, ".symbol", ctx)?,
        kernarg_size,
        kernarg_align,
        group_segment_fixed_size: get_u32(map, ".group_segment_fixed_size", ctx)?,
        private_segment_fixed_size: get_u32(map, ".private_segment_fixed_size", ctx)?,
        max_flat_workgroup_size: match get(map, ".max_flat_workgroup_size") {
            Some(_) => get_u32(map, ".max_flat_workgroup_size", ctx)?,
            None => 1024,
        },
        wavefront_size: get_u32(map, ".wavefront_size", ctx)?,
        uses_dynamic_stack: match get(map, ".uses_dynamic_stack") {
            Some(b) => b.as_bool().ok_or_else(|| {
                CodeObjectError::BadMetadata(format!(
                    "kernel {ctx}: .uses_dynamic_stack is not a boolean"
                ))
            })?,
            None => false,
        },
        sgpr_count: optional_u32(map, ".sgpr_count", ctx)?,
        vgpr_count: optional_u32(map, ".vgpr_count", ctx)?,
        agpr_count: optional_u32(map, ".agpr_count", ctx)?,
        args,
        name,
    })
}

fn arg_from_metadata(v: &Value, kernel: &str, kernarg_size: u32) -> Result<KernelArg> {
    let map = as_map(v, "kernel argument")?;
    let offset = get_u32(map, ".offset", kernel)?;
    let size = get_u32(map, ".size", kernel)?;
    let kind = ArgKind::parse(&get_str(map, ".value_kind", kernel)?)
        .map_err(|e| CodeObjectError::BadMetadata(format!("kernel {kernel}: {e}")))?;
    // The kernarg writer relies on this: every argument lies inside the segment.
    if u64::from(offset) + u64::from(size) > u64::from(kernarg_size) {
        return Err(CodeObjectError::BadMetadata(format!(
            "kernel {kernel}: argument at {offset}+{size} exceeds kernarg segment size \
             {kernarg_size}"
        )));
    }
    Ok(KernelArg { offset, size, kind })
}

fn as_map<'v>(v: &'v Value, what: &str) -> Result<&'v [(Value, Value)]> {
    v.as_map()
        .map(Vec::as_slice)
        .ok_or_else(|| CodeObjectError::BadMetadata(format!("{what} is not a map")))
}

fn get<'v>(map: &'v [(Value, Value)], key: &str) -> Option<&'v Value> {
    map.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn get_u32(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<u32> {
    let v = get(map, key)
        .ok_or_else(|| CodeObjectError::BadMetadata(format!("{ctx}: missing {key}")))?;
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| CodeObjectError::BadMetadata(format!("{ctx}: {key} = {v} is not a u32")))
}

/// A u32 field that older code objects may omit (0 when absent).
fn optional_u32(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<u32> {
    match get(map, key) {
        Some(_) => get_u32(map, key, ctx),
        None => Ok(0),
    }
}

fn get_str(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<String> {
    let v = get(map, key)
        .ok_or_else(|| CodeObjectError::BadMetadata(format!("{ctx}: missing {key}")))?;
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| CodeObjectError::BadMetadata(format!("{ctx}: {key} is not a string")))
}

/// Builds real code objects with clang-19 once per test binary; shared with the kernarg
/// tests.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;
    use std::process::Command;
    use std::sync::OnceLock;

    use object::{Object, ObjectSection};

    pub const CLANG: &str = "clang++-19";

    /// Kernels whose metadata the tests check. Only builtins, so no HIP headers are needed.
    pub const KERNELS: &str = r#"
#define __global__ __attribute__((global))
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
extern "C" hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
extern "C" unsigned __hipPushCallConfiguration(dim3, dim3, unsigned long = 0, hipStream_t = 0);
extern "C" hipError_t __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, hipStream_t *);

struct S { char c; double d; };

extern "C" __global__ void scale(float *out, int n, S s, float f) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  if (i < (unsigned)n) out[i] = f * (float)s.d + s.c;
}

extern "C" __global__ void fill3d(int *out, int pitch_y, int pitch_z) {
  unsigned x = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  unsigned y = __builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y() +
               __builtin_amdgcn_workitem_id_y();
  unsigned z = __builtin_amdgcn_workgroup_id_z() * __builtin_amdgcn_workgroup_size_z() +
               __builtin_amdgcn_workitem_id_z();
  out[x + y * pitch_y + z * pitch_z] = 1;
}

// Reading the implicit-argument area wholesale makes the compiler list every hidden
// argument it knows for the code object version.
extern "C" __global__ void implicit(unsigned long *out) {
  const unsigned long *p = (const unsigned long *)__builtin_amdgcn_implicitarg_ptr();
  for (int i = 0; i < 32; ++i) out[i] = p[i];
}
"#;

    pub struct Built {
        /// `.hip_fatbin` of a host object for gfx942 + gfx90a:xnack-, code object v5.
        pub bundle: Vec<u8>,
        /// The same with `--offload-compress`, or why clang could not build it.
        pub compressed: Result<Vec<u8>, String>,
        /// Raw gfx942 code objects, v5 and v4.
        pub co_v5: Vec<u8>,
        pub co_v4: Vec<u8>,
        /// The host object itself (an x86-64 ELF), for negative tests.
        pub host_object: Vec<u8>,
    }

    fn clang(dir: &Path, args: &[&str]) -> Result<(), String> {
        let out = Command::new(CLANG)
            .current_dir(dir)
            .args(["-x", "hip", "-nogpuinc", "-nogpulib", "-O3"])
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {CLANG} ({e}): these tests compile HIP kernels at test time; \
                     install clang-19 (apt-get install clang-19 lld-19)"
                )
            });
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{CLANG} {} failed:\n{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn fatbin_section(host_object: &[u8]) -> Vec<u8> {
        let file = object::File::parse(host_object).expect("clang's host object parses");
        let section = file
            .section_by_name(".hip_fatbin")
            .expect("host object has a .hip_fatbin section");
        section.data().expect("section data").to_vec()
    }

    fn build() -> Built {
        let dir = std::env::temp_dir().join(format!("hipshim-code-object-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.hip"), KERNELS).unwrap();
        let arches = [
            "--offload-arch=gfx942",
            "--offload-arch=gfx90a:xnack-",
            "-mcode-object-version=5",
        ];
        let must = |r: Result<(), String>| r.unwrap_or_else(|e| panic!("{e}"));
        must(clang(
            &dir,
            &[&arches[..], &["-c", "k.hip", "-o", "k.o"]].concat(),
        ));
        let compressed = clang(
            &dir,
            &[
                &arches[..],
                &["--offload-compress", "-c", "k.hip", "-o", "kc.o"],
            ]
            .concat(),
        );
        for (version, out) in [("5", "k5.co"), ("4", "k4.co")] {
            must(clang(
                &dir,
                &[
                    "--offload-arch=gfx942",
                    &format!("-mcode-object-version={version}"),
                    "--cuda-device-only",
                    "--no-gpu-bundle-output",
                    "-c",
                    "k.hip",
                    "-o",
                    out,
                ],
            ));
        }
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let host_object = read("k.o");
        let built = Built {
            bundle: fatbin_section(&host_object),
            compressed: compressed.map(|()| fatbin_section(&read("kc.o"))),
            co_v5: read("k5.co"),
            co_v4: read("k4.co"),
            host_object,
        };
        let _ = std::fs::remove_dir_all(&dir);
        built
    }

    /// The compiled artefacts; panics with a clear message when clang-19 is missing.
    pub fn built() -> &'static Built {
        static BUILT: OnceLock<Built> = OnceLock::new();
        BUILT.get_or_init(build)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::built;
    use super::*;

    const GFX942_AGENT: &str = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";

    /// A bundle assembled by hand: `(id, data)` pairs, data placed after the header.
    fn make_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let header_len: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut out = BUNDLE_MAGIC.to_vec();
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let mut offset = header_len;
        for (id, data) in entries {
            out.extend_from_slice(&(offset as u64).to_le_bytes());
            out.extend_from_slice(&(data.len() as u64).to_le_bytes());
            out.extend_from_slice(&(id.len() as u64).to_le_bytes());
            out.extend_from_slice(id.as_bytes());
            offset += data.len();
        }
        for (_, data) in entries {
            out.extend_from_slice(data);
        }
        out
    }

    /// A compressed bundle of the given CCOB version around `payload` (already compressed).
    fn make_ccob(version: u16, method: u16, uncompressed_len: usize, payload: &[u8]) -> Vec<u8> {
        let mut out = CCOB_MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&method.to_le_bytes());
        let header_len = [0, 20, 24, 32][usize::from(version)];
        let total = (header_len + payload.len()) as u64;
        match version {
            1 => out.extend_from_slice(&(uncompressed_len as u32).to_le_bytes()),
            2 => {
                out.extend_from_slice(&(total as u32).to_le_bytes());
                out.extend_from_slice(&(uncompressed_len as u32).to_le_bytes());
            }
            _ => {
                out.extend_from_slice(&total.to_le_bytes());
                out.extend_from_slice(&(uncompressed_len as u64).to_le_bytes());
            }
        }
        out.extend_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
        assert_eq!(out.len(), header_len);
        out.extend_from_slice(payload);
        out
    }

    fn wrapper_for(bundle: &'static [u8]) -> FatbinWrapper {
        FatbinWrapper {
            magic: HIP_FATBIN_MAGIC,
            version: HIP_FATBIN_VERSION,
            bundle: bundle.as_ptr(),
            reserved: std::ptr::null(),
        }
    }

    /// The bundle followed by unrelated bytes, leaked so it lives as long as a real
    /// `.hip_fatbin` section would.
    fn leaked_with_trailer(bundle: &[u8]) -> &'static [u8] {
        let mut v = bundle.to_vec();
        v.extend_from_slice(&[0xa5; 4096]);
        Box::leak(v.into_boxed_slice())
    }

    fn ids(entries: &[BundleEntry<'_>]) -> Vec<String> {
        entries.iter().map(|e| e.id.clone()).collect()
    }

    #[test]
    fn parses_clang_uncompressed_bundle() {
        let entries = parse_bundle(&built().bundle).unwrap();
        assert_eq!(
            ids(&entries),
            [
                "host-x86_64-unknown-linux--",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
                "hipv4-amdgcn-amd-amdhsa--gfx942",
            ]
        );
        assert_eq!(entries[0].target, None);
        assert!(entries[0].data.is_empty());
        assert_eq!(entries[0].kind(), "host");
        let gfx90a = entries[1].target.as_ref().unwrap();
        assert_eq!(
            (gfx90a.processor.as_str(), gfx90a.sramecc, gfx90a.xnack),
            ("gfx90a", None, Some(false))
        );
        assert_eq!(entries[2].isa_name().unwrap(), "amdgcn-amd-amdhsa--gfx942");
        for e in &entries[1..] {
            assert!(matches!(e.data, Cow::Borrowed(_)));
            assert!(e.data.starts_with(b"\x7fELF"), "{} is not an ELF", e.id);
            let info = read_code_object(&e.data).unwrap();
            assert_eq!(info.target, e.isa_name().unwrap());
            assert_eq!(info.code_object_version, 5);
        }
    }

    #[test]
    fn parses_clang_compressed_bundle_like_the_uncompressed_one() {
        let compressed = match &built().compressed {
            Ok(c) => c,
            Err(why) => {
                // A clang built without zstd cannot emit CCOB; say so instead of passing.
                eprintln!("SKIPPED: clang-19 cannot --offload-compress here: {why}");
                return;
            }
        };
        assert!(compressed.starts_with(b"CCOB"));
        let header = read_ccob_header(compressed.as_slice()).unwrap();
        assert_eq!((header.version, header.method), (2, CCOB_METHOD_ZSTD));
        assert_eq!(header.file_size, Some(compressed.len() as u64));

        // A separate compilation (clang picks a fresh CUID per build, so the bytes differ):
        // compare what the runtime uses instead.
        let plain = parse_bundle(&built().bundle).unwrap();
        let unpacked = parse_bundle(compressed).unwrap();
        assert_eq!(ids(&unpacked), ids(&plain));
        for (a, b) in unpacked.iter().zip(&plain) {
            assert!(matches!(a.data, Cow::Owned(_)));
            assert_eq!(a.target, b.target);
            if !b.data.is_empty() {
                assert_eq!(
                    read_code_object(&a.data).unwrap(),
                    read_code_object(&b.data).unwrap(),
                    "entry {}",
                    a.id
                );
            }
        }
    }

    /// `bytes` copied to end exactly where 4 MiB of inaccessible (PROT_NONE) memory begin,
    /// so any read past them would fault. PROT_NONE rather than unmapped, so no other
    /// test's mapping can move in. Leaked: the tests keep pointers into it.
    fn at_page_end(bytes: &[u8]) -> &'static [u8] {
        const GUARD: usize = 4 << 20;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let data = bytes.len().div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping, whose tail is made inaccessible and
        // which is never unmapped (it is leaked).
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                data + GUARD,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(base, libc::MAP_FAILED);
            let guard = base.cast::<u8>().add(data);
            assert_eq!(libc::mprotect(guard.cast(), GUARD, libc::PROT_NONE), 0);
            let start = guard.sub(bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
            std::slice::from_raw_parts(start, bytes.len())
        }
    }

    fn wrapper_bytes(bundle: *const u8) -> Vec<u8> {
        let w = FatbinWrapper {
            magic: HIP_FATBIN_MAGIC,
            version: HIP_FATBIN_VERSION,
            bundle,
            reserved: std::ptr::null(),
        };
        // SAFETY: FatbinWrapper is plain old data without padding (two u32, two pointers).
        unsafe {
            std::slice::from_raw_parts(
                (&w as *const FatbinWrapper).cast::<u8>(),
                std::mem::size_of::<FatbinWrapper>(),
            )
        }
        .to_vec()
    }

    #[test]
    fn wrapper_yields_exactly_the_bundle() {
        let plain = &built().bundle;
        let mut bundles = vec![plain.clone()];
        if let Ok(c) = &built().compressed {
            bundles.push(c.clone());
        }
        let expected = parse_bundle(plain).unwrap();
        let expected = select_code_object(&expected, GFX942_AGENT).unwrap();
        for bundle in bundles {
            for memory in [leaked_with_trailer(&bundle), at_page_end(&bundle)] {
                let wrapper = wrapper_for(memory);
                // SAFETY: any pointer is allowed; this one is a valid wrapper.
                let found = unsafe {
                    ForeignBundle::from_wrapper((&wrapper as *const FatbinWrapper).cast())
                }
                .unwrap();
                assert_eq!(found.len(), bundle.len() as u64);
                let co = found.code_object_for(GFX942_AGENT).unwrap();
                assert_eq!(
                    read_code_object(&co).unwrap(),
                    read_code_object(&expected.data).unwrap()
                );
            }
        }
    }

    #[test]
    fn wrapper_rejects_bad_input() {
        let from = |w: &FatbinWrapper| {
            // SAFETY: any pointer is allowed.
            unsafe { ForeignBundle::from_wrapper((w as *const FatbinWrapper).cast()) }
        };
        // SAFETY: null is allowed.
        let err = unsafe { ForeignBundle::from_wrapper(std::ptr::null()) }.unwrap_err();
        assert_eq!(err, CodeObjectError::NullPointer("fat binary wrapper"));

        let bundle = leaked_with_trailer(&make_bundle(&[]));
        let mut w = wrapper_for(bundle);
        w.magic = 0x1234;
        assert!(matches!(
            from(&w),
            Err(CodeObjectError::BadWrapper { magic: 0x1234, .. })
        ));
        w.magic = HIP_FATBIN_MAGIC;
        w.version = 2;
        assert!(matches!(
            from(&w),
            Err(CodeObjectError::BadWrapper { version: 2, .. })
        ));
        w.version = 1;
        w.bundle = std::ptr::null();
        assert_eq!(
            from(&w).unwrap_err(),
            CodeObjectError::NullPointer("fat binary bundle")
        );
        // A bundle pointer into unmapped memory, and a wrapper cut short by one.
        let gone = at_page_end(b"x").as_ptr().wrapping_add(1);
        w.bundle = gone;
        assert!(matches!(
            from(&w),
            Err(CodeObjectError::Unreadable { at: 0, .. })
        ));
        let cut = wrapper_bytes(bundle.as_ptr());
        let cut = at_page_end(&cut[..cut.len() - 9]);
        // SAFETY: any pointer is allowed.
        let err = unsafe { ForeignBundle::from_wrapper(cut.as_ptr().cast()) }.unwrap_err();
        assert!(matches!(err, CodeObjectError::Unreadable { .. }), "{err}");
    }

    #[test]
    fn registered_bundle_reads_only_the_entry_it_needs() {
        // The gfx942 entry lies inside the memory; the header says the gfx90a entry is
        // 1 MiB past its end.
        let gfx942 = built().co_v5.clone();
        let (host, id942, id90a) = (
            "host-x86_64-unknown-linux--",
            "hipv4-amdgcn-amd-amdhsa--gfx942",
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
        );
        let mut bundle = make_bundle(&[(host, b""), (id942, &gfx942), (id90a, b"x")]);
        let third = 32 + (24 + host.len()) + (24 + id942.len());
        let far = bundle.len() as u64 + (1 << 20);
        bundle[third..third + 8].copy_from_slice(&far.to_le_bytes());
        bundle[third + 8..third + 16].copy_from_slice(&4096u64.to_le_bytes());
        let memory = at_page_end(&bundle);
        let wrapper = wrapper_for(memory);
        // SAFETY: any pointer is allowed.
        let found =
            unsafe { ForeignBundle::from_wrapper((&wrapper as *const FatbinWrapper).cast()) }
                .unwrap();
        assert_eq!(found.len(), far + 4096);
        assert_eq!(found.code_object_for(GFX942_AGENT).unwrap(), gfx942);
        let err = found
            .code_object_for("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-")
            .unwrap_err();
        assert!(
            matches!(
                err,
                CodeObjectError::Unreadable {
                    what: "code object",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn images_without_a_length_never_read_past_what_exists() {
        let co = &built().co_v5;
        let bundle = &built().bundle;
        let load = |bytes: &[u8]| {
            // SAFETY: any pointer is allowed.
            unsafe { image_from_memory(at_page_end(bytes).as_ptr().cast()) }
        };
        // Complete images that end at an unmapped page load, exactly.
        assert_eq!(&load(co).unwrap(), co);
        assert_eq!(&load(bundle).unwrap(), bundle);
        let wrapper = wrapper_bytes(at_page_end(bundle).as_ptr());
        assert_eq!(&load(&wrapper).unwrap(), bundle);
        assert_eq!(elf_extent(co.as_slice()).unwrap(), co.len() as u64);
        assert_eq!(
            elf_extent(built().co_v4.as_slice()).unwrap(),
            built().co_v4.len() as u64
        );
        // Every truncation is an error naming unreadable memory (or a bad header).
        for image in [co, bundle] {
            for len in (1..image.len()).step_by(97).chain([image.len() - 1]) {
                match load(&image[..len]) {
                    // `at` is where the walk met unreadable memory: at or past the cut.
                    Err(CodeObjectError::Unreadable { at, end, .. }) => {
                        assert!(at >= len as u64 && end > at, "cut at {len}: {at}, {end}");
                    }
                    Err(CodeObjectError::Corrupt(_) | CodeObjectError::NotAmdgpuElf(_))
                        if len < 64 => {}
                    other => panic!("prefix of {len} bytes: {other:?}"),
                }
            }
        }
        // Header fields that point far away, and absurd lengths, allocate nothing big.
        let mut far = co[..64].to_vec();
        far[56..58].fill(0); // e_phnum: no program headers to read first
        far[40..48].copy_from_slice(&(1u64 << 34).to_le_bytes());
        assert!(matches!(
            load(&far),
            Err(CodeObjectError::Unreadable { .. })
        ));
        far[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(load(&far), Err(CodeObjectError::Corrupt(_))));
        let mut huge = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", b"x")]);
        huge[40..48].copy_from_slice(&(MAX_IMAGE_COPY + 1).to_le_bytes());
        assert!(matches!(load(&huge), Err(CodeObjectError::Corrupt(m)) if m.contains("at most")));
        // SAFETY: null is allowed.
        assert_eq!(
            unsafe { image_from_memory(std::ptr::null()) }.unwrap_err(),
            CodeObjectError::NullPointer("code image")
        );
    }

    #[test]
    fn maps_listing_gives_the_readable_prefix() {
        let maps = "\
1000-3000 r-xp 00000000 08:01 1 /bin/x
3000-4000 rw-p 00000000 00:00 0
4000-5000 ---p 00000000 00:00 0
6000-7000 r--p 00000000 00:00 0 [heap]
";
        assert_eq!(readable_prefix(maps, 0x1000, 0x10), 0x10);
        assert_eq!(readable_prefix(maps, 0x2ff0, 0x100), 0x100);
        assert_eq!(readable_prefix(maps, 0x2ff0, 0x2000), 0x1010);
        assert_eq!(readable_prefix(maps, 0x5800, 0x10), 0);
        assert_eq!(readable_prefix(maps, 0x6800, 0x1000), 0x800);
        assert_eq!(readable_prefix(maps, 0x800, 0x10), 0);
        assert_eq!(readable_prefix("garbage\n\n", 0x1000, 0x10), 0);
        assert_eq!(readable_prefix(maps, usize::MAX - 4, 100), 0);
    }

    #[test]
    fn foreign_reads_stop_at_unmapped_memory() {
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let memory = at_page_end(&data);
        let mut out = vec![0u8; 6000];
        assert_eq!(read_foreign(memory.as_ptr() as usize, &mut out, 1), 5000);
        assert_eq!(&out[..5000], &data[..]);
        assert_eq!(
            read_foreign(memory.as_ptr() as usize + 5000, &mut out, 1),
            0
        );
        assert_eq!(read_foreign(usize::MAX - 3, &mut out, 1), 0);
        assert_eq!(read_foreign(16, &mut out, 1), 0);
        let copy = copy_foreign(memory.as_ptr() as usize, 5000, "test").unwrap();
        assert_eq!(copy, data);
        assert_eq!(
            copy_foreign(memory.as_ptr() as usize, 5001, "test").unwrap_err(),
            CodeObjectError::Unreadable {
                what: "test",
                address: memory.as_ptr() as usize,
                at: 5000,
                end: 5001
            }
        );
    }

    #[test]
    fn ccob_versions_1_and_3_and_their_lengths() {
        let plain = &built().bundle;
        let frame = zstd::bulk::compress(plain, 3).unwrap();
        let expected = parse_bundle(plain).unwrap();
        for version in [1, 2, 3] {
            let ccob = make_ccob(version, CCOB_METHOD_ZSTD, plain.len(), &frame);
            let entries = parse_bundle(&ccob).unwrap();
            assert_eq!(entries, expected, "CCOB v{version}");
            // v1 has no total size: the length comes from walking the zstd frame.
            assert_eq!(
                bundle_length(leaked_with_trailer(&ccob)).unwrap(),
                ccob.len() as u64
            );
            // SAFETY: any pointer is allowed.
            let copied = unsafe { image_from_memory(at_page_end(&ccob).as_ptr().cast()) };
            assert_eq!(copied.unwrap(), ccob);
            // Trailing bytes after the bundle are ignored by parse_bundle too.
            assert_eq!(parse_bundle(leaked_with_trailer(&ccob)).unwrap(), expected);
        }
    }

    #[test]
    fn zstd_frame_walk_handles_raw_rle_and_checksummed_frames() {
        // Incompressible data gives raw blocks, a run gives an RLE block, level 19 with a
        // checksum exercises the optional trailer.
        let mut noise = vec![0u8; 300_000];
        let mut x: u32 = 1;
        for b in &mut noise {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *b = (x >> 16) as u8;
        }
        let run = vec![7u8; 200_000];
        for data in [noise, run, Vec::new()] {
            let mut enc = zstd::stream::Encoder::new(Vec::new(), 19).unwrap();
            enc.include_checksum(true).unwrap();
            std::io::Write::write_all(&mut enc, &data).unwrap();
            let frame = enc.finish().unwrap();
            let mut padded = frame.clone();
            padded.extend_from_slice(&[0xff; 64]);
            assert_eq!(
                zstd_frame_length(padded.as_slice(), 0).unwrap(),
                frame.len() as u64
            );
        }
    }

    #[test]
    fn zlib_bundles_are_reported_unsupported() {
        for version in [1, 2, 3] {
            let ccob = make_ccob(version, CCOB_METHOD_ZLIB, 100, &[0x78, 0x9c, 1, 2, 3]);
            let err = parse_bundle(&ccob).unwrap_err();
            assert!(
                matches!(&err, CodeObjectError::Unsupported(m) if m.contains("zlib")),
                "v{version}: {err}"
            );
        }
    }

    #[test]
    fn selects_the_code_object_for_each_agent() {
        let entries = parse_bundle(&built().bundle).unwrap();
        let pick = |agent: &str| select_code_object(&entries, agent).map(|e| e.id.as_str());
        assert_eq!(pick(GFX942_AGENT), Ok("hipv4-amdgcn-amd-amdhsa--gfx942"));
        assert_eq!(
            pick("amdgcn-amd-amdhsa--gfx90a:xnack-"),
            Ok("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")
        );
        assert_eq!(
            pick("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            Ok("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-")
        );
        // The only gfx90a code object needs XNACK off.
        assert!(matches!(
            pick("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"),
            Err(CodeObjectError::NoBinaryForGpu { .. })
        ));

        let err = select_code_object(&entries, "amdgcn-amd-amdhsa--gfx1100").unwrap_err();
        assert_eq!(
            err,
            CodeObjectError::NoBinaryForGpu {
                agent: "amdgcn-amd-amdhsa--gfx1100".into(),
                available: vec![
                    "amdgcn-amd-amdhsa--gfx90a:xnack-".into(),
                    "amdgcn-amd-amdhsa--gfx942".into()
                ],
            }
        );
        let msg = err.to_string();
        for isa in [
            "amdgcn-amd-amdhsa--gfx1100",
            "amdgcn-amd-amdhsa--gfx90a:xnack-",
            "amdgcn-amd-amdhsa--gfx942",
        ] {
            assert!(msg.contains(isa), "{msg:?} does not name {isa}");
        }
    }

    #[test]
    fn prefers_the_most_specific_compatible_code_object() {
        let bundle = make_bundle(&[
            ("host-x86_64-unknown-linux--", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"any"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"xnack-off"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", b"both"),
            ("hip-amdgcn-amd-amdhsa--gfx908", b"old-kind"),
            ("openmp-amdgcn-amd-amdhsa--gfx906", b"not-hip"),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b""),
        ]);
        let entries = parse_bundle(&bundle).unwrap();
        let pick = |agent: &str| {
            select_code_object(&entries, agent).map(|e| std::str::from_utf8(&e.data).unwrap())
        };
        assert_eq!(
            pick("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            Ok("both")
        );
        assert_eq!(
            pick("amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack-"),
            Ok("xnack-off")
        );
        assert_eq!(pick("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+"), Ok("any"));
        assert_eq!(
            pick("amdgcn-amd-amdhsa--gfx908:sramecc+:xnack-"),
            Ok("old-kind")
        );
        // OpenMP entries and empty code objects are never chosen.
        assert!(pick("amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-").is_err());
        assert!(pick("amdgcn-amd-amdhsa--gfx1030").is_err());
        assert!(matches!(
            select_code_object(&entries, "gfx90a:bogus+"),
            Err(CodeObjectError::InvalidTargetId(_))
        ));
    }

    #[test]
    fn target_ids_parse_and_print() {
        let t = TargetId::parse("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").unwrap();
        assert_eq!(
            t,
            TargetId {
                processor: "gfx942".into(),
                sramecc: Some(true),
                xnack: Some(false)
            }
        );
        assert_eq!(t.to_string(), "gfx942:sramecc+:xnack-");
        // clang orders features alphabetically; accept either order on input.
        assert_eq!("gfx942:xnack-:sramecc+".parse::<TargetId>().unwrap(), t);
        let generic = TargetId::parse("amdgcn-amd-amdhsa--gfx9-generic:xnack+").unwrap();
        assert_eq!(generic.processor, "gfx9-generic");
        assert_eq!(generic.isa_name(), "amdgcn-amd-amdhsa--gfx9-generic:xnack+");
        for bad in [
            "",
            "gfx90a:xnack",
            "gfx90a:xnack+:xnack-",
            "gfx90a:tgsplit+",
            ":xnack+",
            "amdgcn-amd",
            "amdgcn-amd-amdpal--gfx1030",
            "gfx 90a",
        ] {
            assert!(
                matches!(
                    TargetId::parse(bad),
                    Err(CodeObjectError::InvalidTargetId(_))
                ),
                "{bad:?} parsed"
            );
        }
    }

    #[test]
    fn reads_v5_kernel_metadata() {
        let info = read_code_object(&built().co_v5).unwrap();
        assert_eq!(info.code_object_version, 5);
        assert_eq!(info.target, "amdgcn-amd-amdhsa--gfx942");
        let k = info.kernel("scale").expect("kernel scale");
        assert_eq!(k.symbol, "scale.kd");
        assert_eq!(k.wavefront_size, 64);
        assert_eq!(k.kernarg_align, 8);
        assert_eq!(k.explicit_arg_count(), 4);
        let explicit: Vec<_> = k.args[..4]
            .iter()
            .map(|a| (a.offset, a.size, a.kind.clone()))
            .collect();
        assert_eq!(
            explicit,
            [
                (0, 8, ArgKind::GlobalBuffer),
                (8, 4, ArgKind::ByValue),
                (16, 16, ArgKind::ByValue), // struct { char; double }: 8-aligned
                (32, 4, ArgKind::ByValue),
            ]
        );
        // v5 hidden arguments start at the first 8-aligned offset after the explicit ones
        // and follow the AMDGPUUsage v5 layout relative to that base.
        let hidden = |h: HiddenArg| {
            k.args
                .iter()
                .find(|a| a.kind == ArgKind::Hidden(h.clone()))
                .map(|a| (a.offset, a.size))
                .unwrap_or_else(|| panic!("no {h:?}"))
        };
        assert_eq!(hidden(HiddenArg::BlockCountX), (40, 4));
        assert_eq!(hidden(HiddenArg::BlockCountZ), (48, 4));
        assert_eq!(hidden(HiddenArg::GroupSizeX), (52, 2));
        assert_eq!(hidden(HiddenArg::RemainderX), (58, 2));
        assert_eq!(hidden(HiddenArg::GlobalOffsetX), (80, 8));
        assert_eq!(hidden(HiddenArg::GridDims), (104, 2));
        assert!(
            k.kernarg_size >= 40 + 256,
            "v5 reserves 256 bytes of hidden args"
        );

        // A kernel reading the whole implicit area gets the full v5 list.
        let all = info.kernel("implicit").expect("kernel implicit");
        assert_eq!(all.kernarg_size, 8 + 256);
        let kinds: Vec<_> = all
            .args
            .iter()
            .map(|a| (a.offset, a.kind.clone()))
            .collect();
        for expected in [
            (8, ArgKind::Hidden(HiddenArg::BlockCountX)),
            (20, ArgKind::Hidden(HiddenArg::GroupSizeX)),
            (26, ArgKind::Hidden(HiddenArg::RemainderX)),
            (48, ArgKind::Hidden(HiddenArg::GlobalOffsetX)),
            (72, ArgKind::Hidden(HiddenArg::GridDims)),
            (88, ArgKind::Hidden(HiddenArg::HostcallBuffer)),
            (96, ArgKind::Hidden(HiddenArg::MultigridSyncArg)),
            (104, ArgKind::Hidden(HiddenArg::HeapV1)),
            (112, ArgKind::Hidden(HiddenArg::DefaultQueue)),
            (120, ArgKind::Hidden(HiddenArg::CompletionAction)),
            (208, ArgKind::Hidden(HiddenArg::QueuePtr)),
        ] {
            assert!(kinds.contains(&expected), "{expected:?} not in {kinds:?}");
        }
    }

    #[test]
    fn reads_v4_kernel_metadata() {
        let info = read_code_object(&built().co_v4).unwrap();
        assert_eq!(info.code_object_version, 4);
        assert_eq!(info.target, "amdgcn-amd-amdhsa--gfx942");
        let k = info.kernel("scale").expect("kernel scale");
        assert_eq!(k.explicit_arg_count(), 4);
        let offsets: Vec<_> = k.args[..4].iter().map(|a| a.offset).collect();
        assert_eq!(offsets, [0, 8, 16, 32]);
        // v4 has no block counts or group sizes in kernargs: those come from the dispatch
        // packet. A kernel reading its implicit area sees the v4 hidden list.
        let all = info.kernel("implicit").expect("kernel implicit");
        let hidden: Vec<_> = all
            .args
            .iter()
            .map(|a| (a.offset, a.size, a.kind.clone()))
            .collect();
        let h = |offset, kind| (offset, 8, ArgKind::Hidden(kind));
        assert_eq!(
            hidden,
            [
                (0, 8, ArgKind::GlobalBuffer),
                h(8, HiddenArg::GlobalOffsetX),
                h(16, HiddenArg::GlobalOffsetY),
                h(24, HiddenArg::GlobalOffsetZ),
                h(32, HiddenArg::HostcallBuffer),
                h(40, HiddenArg::DefaultQueue),
                h(48, HiddenArg::CompletionAction),
                h(56, HiddenArg::MultigridSyncArg),
            ]
        );
        assert_eq!(all.kernarg_size, 64);
    }

    #[test]
    fn target_from_e_flags_when_the_note_has_none() {
        let elf = &built().co_v5;
        let header = FileHeader64::<Endianness>::parse(elf.as_slice()).unwrap();
        let flags = header.e_flags(header.endian().unwrap());
        let abi = header.e_ident().abi_version;
        assert_eq!(abi, 3, "code object v5 is ELFABIVERSION_AMDGPU_HSA_V5 = 3");
        assert_eq!(
            target_from_e_flags(flags, abi).unwrap().to_string(),
            "gfx942"
        );
        // gfx90a, XNACK on, SRAMECC off.
        let t = target_from_e_flags(0x3f | 0x300 | 0x800, 2).unwrap();
        assert_eq!(t.to_string(), "gfx90a:sramecc-:xnack+");
        assert!(target_from_e_flags(0xff, 2).is_err());
    }

    #[test]
    fn rejects_non_amdgpu_and_broken_code_objects() {
        assert!(matches!(
            read_code_object(&built().host_object),
            Err(CodeObjectError::NotAmdgpuElf(m)) if m.contains("e_machine")
        ));
        assert!(matches!(
            read_code_object(b"not an elf at all"),
            Err(CodeObjectError::NotAmdgpuElf(_))
        ));
        // Every truncation is an error, never a panic.
        let co = &built().co_v5;
        for len in (0..co.len()).step_by(7) {
            assert!(
                read_code_object(&co[..len]).is_err(),
                "prefix of {len} bytes parsed"
            );
        }
        // Renumber the metadata note's type: the note is gone.
        let mut no_note = co.clone();
        let pat = [7u8, 0, 0, 0];
        let pos = (0..no_note.len() - 20)
            .find(|&i| {
                no_note[i..i + 4] == pat && no_note[i + 8..i + 20] == *b"\x20\0\0\0AMDGPU\0\0"
            })
            .expect("metadata note header");
        no_note[pos + 8] = 33;
        assert_eq!(
            read_code_object(&no_note),
            Err(CodeObjectError::MissingMetadata)
        );
    }

    #[test]
    fn corrupt_or_truncated_bundles_are_errors() {
        let bundle = &built().bundle;
        // Every prefix shorter than the last entry's end is rejected.
        for len in (0..bundle.len()).step_by(13).chain([bundle.len() - 1]) {
            assert!(parse_bundle(&bundle[..len]).is_err(), "prefix {len} parsed");
        }
        assert!(matches!(
            parse_bundle(b"__CLANG_OFFLOAD_BUNDLX__"),
            Err(CodeObjectError::UnknownBundleFormat { .. })
        ));
        assert!(matches!(
            parse_bundle(b""),
            Err(CodeObjectError::Truncated { .. })
        ));

        // An entry whose offset + size overflows.
        let mut overflow = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", b"x")]);
        overflow[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            parse_bundle(&overflow),
            Err(CodeObjectError::Corrupt(_))
        ));
        assert!(bundle_length(overflow.as_slice()).is_err());
        // Absurd counts and id lengths are refused before any walk.
        let mut many = make_bundle(&[]);
        many[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            parse_bundle(&many),
            Err(CodeObjectError::Corrupt(_))
        ));
        let mut long_id = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", b"x")]);
        long_id[48..56].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(matches!(
            parse_bundle(&long_id),
            Err(CodeObjectError::Corrupt(_))
        ));
        let mut bad_utf8 = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", b"x")]);
        bad_utf8[56] = 0xff;
        assert!(matches!(
            parse_bundle(&bad_utf8),
            Err(CodeObjectError::Corrupt(_))
        ));

        // Compressed: truncations, a lying size, a corrupt payload, unknown versions.
        let plain = bundle.as_slice();
        let frame = zstd::bulk::compress(plain, 3).unwrap();
        for version in [1, 2, 3] {
            let ccob = make_ccob(version, CCOB_METHOD_ZSTD, plain.len(), &frame);
            for len in (0..ccob.len()).step_by(5) {
                assert!(
                    parse_bundle(&ccob[..len]).is_err(),
                    "v{version} prefix {len}"
                );
            }
            let lying = make_ccob(version, CCOB_METHOD_ZSTD, plain.len() + 1, &frame);
            assert!(matches!(
                parse_bundle(&lying),
                Err(CodeObjectError::Decompress(_))
            ));
            let short = make_ccob(version, CCOB_METHOD_ZSTD, plain.len() - 1, &frame);
            assert!(matches!(
                parse_bundle(&short),
                Err(CodeObjectError::Decompress(_))
            ));
        }
        // A broken zstd frame header. (Damage inside literal bytes can decompress to the
        // right length; the CCOB hash that would catch it is not checked, see module doc.)
        let mut garbled = make_ccob(2, CCOB_METHOD_ZSTD, plain.len(), &frame);
        garbled[24..28].fill(0x55);
        assert!(matches!(
            parse_bundle(&garbled),
            Err(CodeObjectError::Decompress(_))
        ));
        let mut v9 = make_ccob(2, CCOB_METHOD_ZSTD, plain.len(), &frame);
        v9[4] = 9;
        assert!(matches!(
            parse_bundle(&v9),
            Err(CodeObjectError::Unsupported(_))
        ));
        let mut method7 = make_ccob(2, CCOB_METHOD_ZSTD, plain.len(), &frame);
        method7[6] = 7;
        assert!(matches!(
            parse_bundle(&method7),
            Err(CodeObjectError::Corrupt(_))
        ));
    }

    /// A zstd frame of `blocks` RLE blocks of 128 KiB (zeros): 4 bytes each.
    fn rle_bomb(blocks: usize) -> Vec<u8> {
        let mut frame = 0xFD2F_B528u32.to_le_bytes().to_vec();
        // Frame header: no content size, a window descriptor for 128 KiB (2^17).
        frame.extend_from_slice(&[0x00, (17 - 10) << 3]);
        for i in 0..blocks {
            let last = u32::from(i + 1 == blocks);
            let header = (128 << 10) << 3 | 1 << 1 | last;
            frame.extend_from_slice(&header.to_le_bytes()[..3]);
            frame.push(0);
        }
        frame
    }

    #[test]
    fn decompression_is_bounded_by_the_compressed_size() {
        // 256 MiB of zeros from 8 KiB: more than 1024:1, refused before decompressing.
        let frame = rle_bomb(2048);
        let bomb = make_ccob(3, CCOB_METHOD_ZSTD, 256 << 20, &frame);
        let err = parse_bundle(&bomb).unwrap_err();
        assert!(
            matches!(&err, CodeObjectError::Corrupt(m) if m.contains("1024:1")),
            "{err}"
        );
        // A header promising 32 GiB from a few bytes, likewise.
        let lying = make_ccob(3, CCOB_METHOD_ZSTD, 1 << 35, &rle_bomb(1));
        assert!(matches!(
            parse_bundle(&lying),
            Err(CodeObjectError::Corrupt(_))
        ));
        // Up to 64 MiB is allowed whatever the ratio: the frame decompresses, and then it
        // is not a bundle.
        let small = make_ccob(3, CCOB_METHOD_ZSTD, 32 << 20, &rle_bomb(256));
        assert!(matches!(
            parse_bundle(&small),
            Err(CodeObjectError::UnknownBundleFormat { .. })
        ));
    }

    #[test]
    fn deeply_nested_metadata_is_an_error() {
        let mut co = built().co_v5.clone();
        // The msgpack map after the metadata note's name becomes 4000 nested arrays.
        let pos = (0..co.len() - 20)
            .find(|&i| {
                co[i..i + 4] == [7, 0, 0, 0] && co[i + 8..i + 20] == *b"\x20\0\0\0AMDGPU\0\0"
            })
            .expect("metadata note header");
        let desc = pos + 20;
        let len = u32::from_le_bytes(co[pos + 4..pos + 8].try_into().unwrap()) as usize;
        co[desc..desc + len.min(4000)].fill(0x91);
        // On a thread with a small stack, as an application's may be: the reader recurses
        // once per level, so the nesting it follows is bounded well below what overflows.
        let result = std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(move || read_code_object(&co))
            .unwrap()
            .join()
            .unwrap();
        assert!(matches!(
            result,
            Err(CodeObjectError::BadMetadata(m)) if m.contains("msgpack")
        ));
    }

    #[test]
    fn random_corruption_never_panics() {
        let plain = built().bundle.clone();
        let ccob = make_ccob(
            2,
            CCOB_METHOD_ZSTD,
            plain.len(),
            &zstd::bulk::compress(&plain, 3).unwrap(),
        );
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for original in [&plain, &ccob] {
            for _ in 0..1500 {
                let mut bytes = original.clone();
                for _ in 0..1 + next() % 4 {
                    // Mostly the header, sometimes anywhere.
                    let span = if next() % 4 == 0 {
                        bytes.len()
                    } else {
                        200.min(bytes.len())
                    };
                    let i = (next() as usize) % span;
                    bytes[i] = next() as u8;
                }
                if let Ok(entries) = parse_bundle(&bytes) {
                    for e in &entries {
                        let _ = read_code_object(&e.data);
                    }
                    let _ = select_code_object(&entries, GFX942_AGENT);
                }
                let _ = bundle_length(bytes.as_slice());
            }
        }
    }
}
