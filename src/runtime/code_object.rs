//! Code objects: from the fat binary clang embeds in a HIP program to the per-kernel
//! metadata a launch needs.
//!
//! The path is `__hipRegisterFatBinary(wrapper)` → [`bundle_from_wrapper`] (find the
//! bundle and its length) → [`parse_bundle`] (split it into one entry per target) →
//! [`select_code_object`] (pick the entry that runs on the agent's ISA) →
//! [`read_code_object`] (kernel names, kernarg layout, segment sizes).
//!
//! Everything here except [`bundle_from_wrapper`] is safe code over byte slices, and every
//! length and offset read from those bytes is checked: a corrupt fat binary produces a
//! [`CodeObjectError`], never a panic or an out-of-bounds read.
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
// bound what a corrupt header can make us walk, which matters most in
// `bundle_from_wrapper`, where the bytes are raw memory with no known end.
const MAX_BUNDLE_ENTRIES: u64 = 4096;
const MAX_ENTRY_ID_LEN: u64 = 4096;
const MAX_BUNDLE_SIZE: u64 = 1 << 36;
const MAX_ZSTD_BLOCKS: u64 = 1 << 22;

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
// Reading little-endian fields from either a slice (bounds-checked) or raw memory.

/// Where header fields come from. The slice implementation bounds-checks; the raw one
/// exists only for `bundle_from_wrapper`, where the length is what we are computing.
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

/// Memory starting at a pointer whose extent is unknown.
struct RawBytes(*const u8);

impl ByteSource for RawBytes {
    fn read(&self, offset: u64, out: &mut [u8], what: &'static str) -> Result<()> {
        let end = offset.saturating_add(out.len() as u64);
        // Not a bounds check (there is no known bound), but it keeps a corrupt header from
        // steering the read to an address computation that overflows.
        if end > MAX_BUNDLE_SIZE {
            return Err(CodeObjectError::Truncated {
                what,
                end,
                len: MAX_BUNDLE_SIZE,
            });
        }
        // SAFETY: `RawBytes` is built only in `bundle_from_wrapper` and `image_from_memory`,
        // whose callers guarantee the pointer is the start of a clang-generated offload
        // bundle or code object that is readable for its whole extent. The header walk only reads fields that a well-formed
        // bundle has at these offsets (each position was derived from earlier fields and
        // capped by the MAX_* limits), and `offset + len <= MAX_BUNDLE_SIZE < isize::MAX`.
        unsafe {
            std::ptr::copy_nonoverlapping(self.0.add(offset as usize), out.as_mut_ptr(), out.len());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Fat binary wrapper and bundle length.

#[repr(C)]
struct FatbinWrapper {
    magic: u32,
    version: u32,
    bundle: *const u8,
    reserved: *const c_void,
}

/// Finds the offload bundle behind the pointer `__hipRegisterFatBinary` receives and
/// returns it as a slice of its exact length (worked out from the bundle's own header,
/// because the wrapper carries no length).
///
/// # Safety
/// `wrapper` must be null or point to a readable fat binary wrapper whose `bundle` field is
/// null or points to a clang offload bundle; the bundle must stay mapped and unmodified for
/// the rest of the process (true for the `.hip_fatbin` section of a loaded binary; the shim
/// must not use the slice after `__hipUnregisterFatBinary` of a `dlclose`d library).
/// The magic and version are checked, but a pointer to arbitrary memory cannot be detected.
pub unsafe fn bundle_from_wrapper(wrapper: *const c_void) -> Result<&'static [u8]> {
    if wrapper.is_null() {
        return Err(CodeObjectError::NullPointer("fat binary wrapper"));
    }
    // SAFETY: non-null and, per the caller's contract, a readable wrapper; read unaligned
    // because nothing here relies on the section alignment clang happens to use.
    let w = unsafe { std::ptr::read_unaligned(wrapper.cast::<FatbinWrapper>()) };
    if w.magic != HIP_FATBIN_MAGIC || w.version != HIP_FATBIN_VERSION {
        return Err(CodeObjectError::BadWrapper {
            magic: w.magic,
            version: w.version,
        });
    }
    if w.bundle.is_null() {
        return Err(CodeObjectError::NullPointer("fat binary bundle"));
    }
    let len = bundle_length(&RawBytes(w.bundle))?;
    // SAFETY: the caller guarantees a well-formed bundle at `w.bundle` that lives for the
    // process; `bundle_length` computed its extent from its header (capped well below
    // isize::MAX), so these `len` bytes are that bundle.
    Ok(unsafe { std::slice::from_raw_parts(w.bundle, len as usize) })
}

/// The code image at `image` as `hipModuleLoadData` receives it, with no length: an ELF
/// code object (its extent from the ELF header: the end of the section header table, or of
/// the furthest program segment), an offload bundle (compressed or not), or a fat-binary
/// wrapper (`HIPF`, as `__hipRegisterFatBinary` gets). Returns a copy of exactly the image.
///
/// # Safety
/// `image` must be null or point to one of those forms, readable for its full extent.
pub unsafe fn image_from_memory(image: *const c_void) -> Result<Vec<u8>> {
    if image.is_null() {
        return Err(CodeObjectError::NullPointer("code image"));
    }
    let src = RawBytes(image.cast());
    let magic = src.u32_at(0, "image magic")?;
    if magic == HIP_FATBIN_MAGIC {
        // SAFETY: forwarded: a fat binary wrapper per the caller's contract.
        return Ok(unsafe { bundle_from_wrapper(image) }?.to_vec());
    }
    let len = if magic.to_le_bytes() == *b"\x7fELF" {
        // ELF64 header: e_phoff @32, e_shoff @40, e_phentsize @54, e_phnum @56,
        // e_shentsize @58, e_shnum @60.
        let shoff = src.u64_at(40, "e_shoff")?;
        let shentsize = u64::from(src.u16_at(58, "e_shentsize")?);
        let shnum = u64::from(src.u16_at(60, "e_shnum")?);
        let phoff = src.u64_at(32, "e_phoff")?;
        let phentsize = u64::from(src.u16_at(54, "e_phentsize")?);
        let phnum = u64::from(src.u16_at(56, "e_phnum")?);
        let mut end = shoff
            .saturating_add(shentsize.saturating_mul(shnum))
            .max(64);
        end = end.max(phoff.saturating_add(phentsize.saturating_mul(phnum)));
        for i in 0..phnum {
            let ph = phoff.saturating_add(i.saturating_mul(phentsize));
            // p_offset @8, p_filesz @32 of an Elf64_Phdr.
            let offset = src.u64_at(ph.saturating_add(8), "p_offset")?;
            let filesz = src.u64_at(ph.saturating_add(32), "p_filesz")?;
            end = end.max(offset.saturating_add(filesz));
        }
        if end > MAX_BUNDLE_SIZE {
            return Err(corrupt(format!("ELF image claims {end} bytes")));
        }
        end
    } else {
        bundle_length(&src)?
    };
    // SAFETY: the extent was computed from the image's own headers (capped well below
    // isize::MAX) and the caller guarantees it is readable.
    Ok(unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len as usize) }.to_vec())
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
            // Make sure the frame's last byte exists (for slices; raw memory trusts it).
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
    let (raw, _) = read_bundle_header(bytes)?;
    let len = bytes.len() as u64;
    let mut entries = Vec::with_capacity(raw.len());
    for e in raw {
        let id_end = e.id_offset + e.id_len;
        if id_end > len {
            return Err(CodeObjectError::Truncated {
                what: "bundle entry id",
                end: id_end,
                len,
            });
        }
        let id = std::str::from_utf8(&bytes[e.id_offset as usize..id_end as usize])
            .map_err(|_| corrupt("bundle entry id is not UTF-8"))?
            .to_owned();
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
        entries.push(BundleEntry {
            id,
            target,
            data: Cow::Borrowed(&bytes[e.offset as usize..end as usize]),
        });
    }
    Ok(entries)
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
    let agent = TargetId::parse(agent_isa)?;
    let mut best: Option<(&'e BundleEntry<'a>, u32)> = None;
    for entry in entries {
        let Some(target) = &entry.target else {
            continue;
        };
        if entry.data.is_empty() || !target.runs_on(&agent) {
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
            available: entries.iter().filter_map(BundleEntry::isa_name).collect(),
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
    let root = rmpv::decode::read_value(&mut &desc[..])
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

    #[test]
    fn wrapper_yields_exactly_the_bundle() {
        let plain = &built().bundle;
        let mut bundles = vec![plain.clone()];
        if let Ok(c) = &built().compressed {
            bundles.push(c.clone());
        }
        for bundle in bundles {
            let memory = leaked_with_trailer(&bundle);
            let wrapper = wrapper_for(memory);
            // SAFETY: a valid wrapper pointing at a leaked (process-lifetime) bundle.
            let found =
                unsafe { bundle_from_wrapper((&wrapper as *const FatbinWrapper).cast()) }.unwrap();
            assert_eq!(found, &bundle[..]);
        }
    }

    #[test]
    fn wrapper_rejects_bad_input() {
        // SAFETY: null is allowed by the contract.
        let err = unsafe { bundle_from_wrapper(std::ptr::null()) }.unwrap_err();
        assert_eq!(err, CodeObjectError::NullPointer("fat binary wrapper"));

        let bundle = leaked_with_trailer(&make_bundle(&[]));
        let mut w = wrapper_for(bundle);
        w.magic = 0x1234;
        // SAFETY (all three calls): the wrapper is readable; its bundle is valid or null.
        let err = unsafe { bundle_from_wrapper((&w as *const FatbinWrapper).cast()) };
        assert!(matches!(
            err,
            Err(CodeObjectError::BadWrapper { magic: 0x1234, .. })
        ));
        w.magic = HIP_FATBIN_MAGIC;
        w.version = 2;
        let err = unsafe { bundle_from_wrapper((&w as *const FatbinWrapper).cast()) };
        assert!(matches!(
            err,
            Err(CodeObjectError::BadWrapper { version: 2, .. })
        ));
        w.version = 1;
        w.bundle = std::ptr::null();
        let err = unsafe { bundle_from_wrapper((&w as *const FatbinWrapper).cast()) };
        assert_eq!(err, Err(CodeObjectError::NullPointer("fat binary bundle")));
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
