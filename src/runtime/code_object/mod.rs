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
//! The files follow those steps: `fatbin.rs` (the `HIPF` wrapper, images without a length
//! and the checked reader of foreign memory), `bundle.rs` (offload bundles, `CCOB`),
//! `target.rs` (target ids, code-object selection) and `metadata.rs` (the ELF code object
//! and its msgpack metadata); this file keeps the error type, the limits and the
//! field reader they share.
//!
//! Every parser here is total: every length, offset, count and alignment read from the
//! bytes is checked, so a corrupt image produces a [`CodeObjectError`], never a panic, an
//! overflow or an out-of-bounds read, and no header can make it allocate more than the
//! limits below. Images that come without a length (a pointer and a header that claims
//! an extent) are read only through a checked reader (see "Memory of unknown extent" in
//! `fatbin.rs`): a header that claims more bytes than exist is
//! [`CodeObjectError::Unreadable`], never a fault. `tests/fuzz_code_objects.rs` holds all
//! of this to account.
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

use std::fmt;

mod bundle;
mod fatbin;
mod metadata;
mod target;

pub use bundle::{parse_bundle, select_code_object, BundleEntry};
pub use fatbin::{image_from_memory, ForeignBundle, HIP_FATBIN_MAGIC, HIP_FATBIN_VERSION};
pub use metadata::{
    read_code_object, ArgKind, CodeObjectIndex, CodeObjectInfo, HiddenArg, KernelArg, KernelInfo,
    NT_AMDGPU_METADATA,
};
pub use target::TargetId;

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
