//! Deterministic mutational fuzzing of the code-object paths: offload bundles
//! (uncompressed and CCOB v1/v2/v3), ELF code objects and their msgpack metadata.
//!
//! Seeds are real code objects built at test time with clang-19 (a fat binary's
//! `.hip_fatbin` bundle, a `--offload-compress` bundle, raw v5 and v4 code objects) plus
//! CCOB v1/v3 re-wrappings of the bundle. Each case is one seed with 1 to 4 mutations
//! drawn from a PRNG seeded by (run seed, case index): bit flips, byte and "interesting
//! value" overwrites (0, 0xff.., 0x7fffffff, sizes of the image ...), truncation,
//! splicing from another seed, insertion and deletion, and edits aimed at the fields that
//! hold sizes, offsets, counts and alignments (bundle entries, CCOB header, ELF file,
//! program and section headers, notes, symbols, relocations, msgpack values).
//!
//! Two targets:
//! - in process (`fuzz_parsers_in_process`): `parse_bundle`, `select_code_object`,
//!   `read_code_object` and the kernarg writer over what they accept, each case under
//!   `catch_unwind`;
//! - the built `libamdhip64.so` (`fuzz_module_loads_in_child`): `hipModuleLoadData(Ex)`
//!   with the image ending where inaccessible memory begins (so any over-read faults), a
//!   `HIPF` wrapper around it, `hipModuleLoad` of it as a file, and
//!   `__hipRegisterFatBinary` + first use. This runs in a child process (this test binary
//!   re-executed), since a fault would end the process: the child records the case it is
//!   on, and the parent keeps a case that killed or hung it and continues after it.
//!
//! A case that panics, crashes or hangs is written to `tests/fuzz/regressions/` (commit
//! it); every file there is replayed by both targets on every run, before the fuzzing.
//!
//! `HIPSHIM_FUZZ_CASES` (default 2000, per target) and `HIPSHIM_FUZZ_SEED` (default a
//! fixed value) select the run; `HIPSHIM_FUZZ_CASES=200000` is a long run. Counts,
//! throughput and the library's answers are printed (`--nocapture`);
//! `HIPSHIM_FUZZ_DEBUG=1` also prints what each child printed.

mod common;

use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use amdhip64::runtime::base::kernarg::{ArgSource, KernargLayout, LaunchGeometry};
use amdhip64::runtime::code_object::{parse_bundle, read_code_object, select_code_object};
use common::Fnv;

const DEFAULT_CASES: u64 = 2000;
const DEFAULT_SEED: u64 = 0x5eed_c0de_0b1e_c759;
/// Cases one child process runs before the next takes over (bounds what executables of
/// successfully registered fat binaries, which are never unloaded, accumulate).
const CHILD_BATCH: u64 = 5000;
/// Findings after which a run stops (a broken build would otherwise fill
/// `tests/fuzz/regressions/` with hundreds of files of the same defect).
const MAX_FINDINGS: usize = 16;
/// How long a child may take per case before it counts as hung (generous: the machine is
/// shared and a load runs the HSA loader).
const CHILD_CASE_TIMEOUT: Duration = Duration::from_secs(20);
const AGENTS: [&str; 2] = [
    "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
];

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        }
        Err(_) => default,
    }
}

fn regressions_dir() -> PathBuf {
    common::repo_root().join("tests/fuzz/regressions")
}

fn regressions() -> Vec<(String, Vec<u8>)> {
    let Ok(dir) = std::fs::read_dir(regressions_dir()) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// Keeps a case that broke a target; returns its path.
fn save_regression(target: &str, bytes: &[u8]) -> PathBuf {
    let dir = regressions_dir();
    std::fs::create_dir_all(&dir).expect("create tests/fuzz/regressions");
    let mut key = Fnv::new();
    key.bytes(bytes);
    let path = dir.join(format!("{target}-{}.bin", key.hex()));
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

// ---------------------------------------------------------------------------------------
// Seeds

/// Kernels for the seeds: by-value structs, a device variable, dynamic LDS, the implicit
/// argument area (so the metadata lists hidden arguments). Builtins only: no headers.
const KERNELS: &str = r#"
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __host__ __attribute__((host))
typedef struct ihipStream_t *hipStream_t;
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
extern "C" unsigned __hipPushCallConfiguration(dim3, dim3, unsigned long = 0, hipStream_t = 0);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, hipStream_t *);
struct Pair { char c; double d; };
__device__ int counter = 5;
extern "C" __global__ void scale(float *out, int n, Pair p, float f) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  if (i < (unsigned)n) out[i] = f * (float)p.d + p.c;
  if (i == 0) __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}
extern "C" __global__ void reverse(int *data) {
  extern __shared__ int tile[];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  tile[t] = data[t];
  __builtin_amdgcn_s_barrier();
  data[t] = tile[__builtin_amdgcn_workgroup_size_x() - 1 - t];
}
extern "C" __global__ void implicit(unsigned long *out) {
  const unsigned long *p = (const unsigned long *)__builtin_amdgcn_implicitarg_ptr();
  for (int i = 0; i < 32; ++i) out[i] = p[i];
}
"#;

/// Builds one seed with clang-19 (cached under `<target>/fuzz-seeds`); None if clang
/// cannot build this kind (only `--offload-compress` may be missing).
fn clang_seed(stem: &str, args: &[&str], optional: bool) -> Option<PathBuf> {
    let clang = common::require_tool(common::ctest::CLANG);
    let dir = common::target_dir().join("fuzz-seeds");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("kernels.hip");
    if std::fs::read_to_string(&source).ok().as_deref() != Some(KERNELS) {
        std::fs::write(&source, KERNELS).unwrap();
    }
    let mut key = Fnv::new();
    key.tool(&clang).bytes(KERNELS.as_bytes());
    for a in args {
        key.bytes(a.as_bytes());
    }
    let build = || {
        common::cached_build(&dir, stem, &key, |out: &Path| {
            let mut cmd = Command::new(&clang);
            cmd.args(["-x", "hip", "-nogpuinc", "-nogpulib", "-O3"])
                .args(args)
                .arg(&source)
                .arg("-o")
                .arg(out);
            cmd
        })
    };
    if optional {
        catch_unwind(build).ok()
    } else {
        Some(build())
    }
}

fn fatbin_section(host_object: &[u8]) -> Vec<u8> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(host_object).expect("clang's host object parses");
    let section = file
        .section_by_name(".hip_fatbin")
        .expect("host object has a .hip_fatbin section");
    let bytes = section.data().expect("section data").to_vec();
    // The section is padded to its alignment; keep the bundle itself.
    match parse_bundle(&bytes) {
        Ok(_) if bytes.starts_with(b"CCOB") => bytes,
        Ok(entries) => {
            let end = entries
                .iter()
                .map(|e| e.data.as_ptr() as usize + e.data.len() - bytes.as_ptr() as usize)
                .max()
                .unwrap_or(bytes.len());
            bytes[..end].to_vec()
        }
        Err(e) => panic!("clang's .hip_fatbin does not parse: {e}"),
    }
}

fn ccob(version: u16, plain: &[u8]) -> Vec<u8> {
    let frame = zstd::bulk::compress(plain, 3).unwrap();
    let header_len = [0usize, 20, 24, 32][usize::from(version)];
    let total = (header_len + frame.len()) as u64;
    let mut out = b"CCOB".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // zstd
    match version {
        1 => out.extend_from_slice(&(plain.len() as u32).to_le_bytes()),
        2 => {
            out.extend_from_slice(&(total as u32).to_le_bytes());
            out.extend_from_slice(&(plain.len() as u32).to_le_bytes());
        }
        _ => {
            out.extend_from_slice(&total.to_le_bytes());
            out.extend_from_slice(&(plain.len() as u64).to_le_bytes());
        }
    }
    out.extend_from_slice(&0x0123_4567_89ab_cdefu64.to_le_bytes());
    out.extend_from_slice(&frame);
    out
}

/// The seeds, in a fixed order.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let arches = ["--offload-arch=gfx942", "--offload-arch=gfx90a:xnack-"];
    let host = clang_seed("host.o", &[&arches[..], &["-c"]].concat(), false).unwrap();
    let compressed = clang_seed(
        "host-compressed.o",
        &[&arches[..], &["--offload-compress", "-c"]].concat(),
        true,
    );
    let raw = |stem: &str, arch: &str, version: &str| {
        let v = format!("-mcode-object-version={version}");
        let a = format!("--offload-arch={arch}");
        let args = [
            a.as_str(),
            v.as_str(),
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-c",
        ];
        clang_seed(stem, &args, false).unwrap()
    };
    let read = |p: &Path| std::fs::read(p).unwrap();
    let bundle = fatbin_section(&read(&host));
    let mut seeds = vec![
        ("bundle".to_owned(), bundle.clone()),
        (
            "co-gfx942-v5".to_owned(),
            read(&raw("gfx942-v5.co", "gfx942", "5")),
        ),
        (
            "co-gfx90a-v4".to_owned(),
            read(&raw("gfx90a-v4.co", "gfx90a", "4")),
        ),
        ("ccob-v1".to_owned(), ccob(1, &bundle)),
        ("ccob-v3".to_owned(), ccob(3, &bundle)),
    ];
    match compressed {
        Some(p) => seeds.push(("ccob-clang".to_owned(), fatbin_section(&read(&p)))),
        None => seeds.push(("ccob-v2".to_owned(), ccob(2, &bundle))),
    }
    seeds
}

// ---------------------------------------------------------------------------------------
// Structure: where the fields worth aiming at are.

#[derive(Clone, Copy, Debug)]
struct Field {
    at: usize,
    width: usize,
}

/// Size, offset, count and alignment fields (and msgpack regions) of one seed.
#[derive(Default)]
struct Layout {
    fields: Vec<Field>,
    /// Byte ranges of msgpack metadata.
    msgpack: Vec<(usize, usize)>,
    /// Offsets just past structure boundaries (good truncation points).
    cuts: Vec<usize>,
}

fn le(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(width)?)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(b);
    Some(u64::from_le_bytes(v))
}

fn layout(bytes: &[u8]) -> Layout {
    let mut l = Layout::default();
    if bytes.starts_with(b"__CLANG_OFFLOAD_BUNDLE__") {
        bundle_layout(bytes, 0, &mut l);
    } else if bytes.starts_with(b"CCOB") {
        let f = |at, width| Field { at, width };
        l.fields
            .extend([f(4, 2), f(6, 2), f(8, 4), f(12, 4), f(8, 8), f(16, 8)]);
        l.cuts.extend([4, 8, 20, 24, 32, 36, 40]);
    } else if bytes.starts_with(b"\x7fELF") {
        elf_layout(bytes, 0, &mut l);
    }
    l.cuts.push(bytes.len().saturating_sub(1));
    l
}

fn bundle_layout(bytes: &[u8], base: usize, l: &mut Layout) {
    let f = |at, width| Field { at, width };
    l.fields.push(f(base + 24, 8));
    let count = le(bytes, base + 24, 8).unwrap_or(0).min(64) as usize;
    let mut pos = base + 32;
    for _ in 0..count {
        l.fields.extend([f(pos, 8), f(pos + 8, 8), f(pos + 16, 8)]);
        let (Some(offset), Some(size), Some(id_len)) = (
            le(bytes, pos, 8),
            le(bytes, pos + 8, 8),
            le(bytes, pos + 16, 8),
        ) else {
            break;
        };
        l.cuts
            .extend([pos + 8, pos + 24, pos + 24 + id_len as usize / 2]);
        let (offset, size) = (offset as usize, size as usize);
        if size > 0 && offset.checked_add(size).is_some_and(|e| e <= bytes.len()) {
            l.cuts
                .extend([offset, offset + size / 2, offset + size - 1]);
            if bytes[offset..].starts_with(b"\x7fELF") {
                elf_layout(&bytes[..offset + size], offset, l);
            }
        }
        pos += 24 + id_len as usize;
    }
}

fn elf_layout(bytes: &[u8], base: usize, l: &mut Layout) {
    let f = |at, width| Field { at, width };
    l.fields.extend([
        f(base + 4, 1),
        f(base + 5, 1),
        f(base + 7, 1),
        f(base + 8, 1),
        f(base + 18, 2),
        f(base + 32, 8),
        f(base + 40, 8),
        f(base + 48, 4),
        f(base + 54, 2),
        f(base + 56, 2),
        f(base + 58, 2),
        f(base + 60, 2),
        f(base + 62, 2),
    ]);
    l.cuts.extend([base + 16, base + 63, base + 64]);
    let rd = |at: usize, width| le(bytes, base + at, width).unwrap_or(0) as usize;
    let (phoff, phnum) = (rd(32, 8), rd(56, 2).min(64));
    for i in 0..phnum {
        let ph = base + phoff + i * 56;
        l.fields.extend([
            f(ph, 4),
            f(ph + 8, 8),
            f(ph + 16, 8),
            f(ph + 32, 8),
            f(ph + 40, 8),
            f(ph + 48, 8),
        ]);
        let p_type = le(bytes, ph, 4).unwrap_or(0);
        let off = le(bytes, ph + 8, 8).unwrap_or(0) as usize;
        let size = le(bytes, ph + 32, 8).unwrap_or(0) as usize;
        if p_type == 4 {
            note_layout(bytes, base + off, size, l);
        }
    }
    let (shoff, shnum) = (rd(40, 8), rd(60, 2).min(128));
    for i in 0..shnum {
        let sh = base + shoff + i * 64;
        l.fields.extend([
            f(sh + 4, 4),
            f(sh + 8, 8),
            f(sh + 24, 8),
            f(sh + 32, 8),
            f(sh + 40, 4),
            f(sh + 48, 8),
            f(sh + 56, 8),
        ]);
        let sh_type = le(bytes, sh + 4, 4).unwrap_or(0);
        let off = base + le(bytes, sh + 24, 8).unwrap_or(0) as usize;
        let size = (le(bytes, sh + 32, 8).unwrap_or(0) as usize).min(1 << 20);
        let entsize = le(bytes, sh + 56, 8).unwrap_or(0) as usize;
        l.cuts.push(off);
        match sh_type {
            // SHT_DYNSYM, SHT_SYMTAB: st_info, st_shndx, st_value, st_size.
            11 | 2 if entsize == 24 => {
                for e in (0..size / 24).take(32) {
                    let s = off + e * 24;
                    l.fields
                        .extend([f(s, 4), f(s + 4, 1), f(s + 6, 2), f(s + 8, 8), f(s + 16, 8)]);
                }
            }
            // SHT_RELA: r_offset, r_info, r_addend.
            4 if entsize == 24 => {
                for e in (0..size / 24).take(32) {
                    let r = off + e * 24;
                    l.fields.extend([f(r, 8), f(r + 8, 8), f(r + 16, 8)]);
                }
            }
            // SHT_DYNAMIC: d_tag, d_val.
            6 => {
                for e in (0..size / 16).take(32) {
                    l.fields
                        .extend([f(off + e * 16, 8), f(off + e * 16 + 8, 8)]);
                }
            }
            _ => {}
        }
    }
}

fn note_layout(bytes: &[u8], start: usize, size: usize, l: &mut Layout) {
    let f = |at, width| Field { at, width };
    let end = start.saturating_add(size).min(bytes.len());
    let mut pos = start;
    while pos + 12 <= end {
        let namesz = le(bytes, pos, 4).unwrap_or(0) as usize;
        let descsz = le(bytes, pos + 4, 4).unwrap_or(0) as usize;
        l.fields.extend([f(pos, 4), f(pos + 4, 4), f(pos + 8, 4)]);
        let desc = pos + 12 + namesz.next_multiple_of(4);
        if bytes.get(pos + 12..pos + 18) == Some(b"AMDGPU") {
            l.msgpack.push((desc, desc.saturating_add(descsz).min(end)));
        }
        pos = desc.saturating_add(descsz.next_multiple_of(4));
    }
}

// ---------------------------------------------------------------------------------------
// Mutations

/// SplitMix64: the case's whole randomness, from (run seed, case index).
struct Rng(u64);

impl Rng {
    fn for_case(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        r.next();
        r
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

fn interesting(len: usize, rng: &mut Rng) -> u64 {
    let len = len as u64;
    const FIXED: [u64; 24] = [
        0,
        1,
        2,
        3,
        4,
        7,
        8,
        16,
        24,
        56,
        64,
        0x7f,
        0x80,
        0xff,
        0x1000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        1 << 32,
        1 << 36,
        1 << 40,
        i64::MAX as u64,
        u64::MAX,
    ];
    match rng.below(8) {
        0 => len,
        1 => len.wrapping_sub(1),
        2 => len + 1,
        3 => len.wrapping_mul(2),
        _ => FIXED[rng.below(FIXED.len())],
    }
}

fn write_le(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    if let Some(dst) = at.checked_add(width).and_then(|end| bytes.get_mut(at..end)) {
        dst.copy_from_slice(&value.to_le_bytes()[..width]);
    }
}

/// msgpack overwrites: markers that promise huge or nested contents, and scalars of the
/// wrong type or size.
fn mutate_msgpack(bytes: &mut [u8], region: (usize, usize), rng: &mut Rng) {
    let (start, end) = region;
    if start >= end || end > bytes.len() {
        return;
    }
    let at = start + rng.below(end - start);
    let patch: Vec<u8> = match rng.below(9) {
        0 => vec![0xdd, 0xff, 0xff, 0xff, 0xff], // array32 of 4G
        1 => vec![0xdf, 0x7f, 0xff, 0xff, 0xff], // map32 of 2G
        2 => vec![0xdb, 0xff, 0xff, 0xff, 0xf0], // str32
        3 => vec![0xc6, 0x80, 0x00, 0x00, 0x00], // bin32
        4 => vec![0x91; 1 + rng.below(3000)],    // deep nesting
        5 => vec![0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], // u64::MAX
        6 => vec![0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0], // i64::MIN
        7 => vec![[0xc0, 0xc3, 0xa0, 0x90, 0x80, 0xca, 0xc1][rng.below(7)]],
        _ => {
            // The value of a key the parser reads.
            const KEYS: [&[u8]; 8] = [
                b".offset",
                b".size",
                b".kernarg_segment_size",
                b".kernarg_segment_align",
                b".value_kind",
                b".group_segment_fixed_size",
                b".wavefront_size",
                b"amdhsa.version",
            ];
            let key = KEYS[rng.below(KEYS.len())];
            let Some(found) = bytes[start..end].windows(key.len()).position(|w| w == key) else {
                return;
            };
            let value = start + found + key.len();
            let v = interesting(end - start, rng);
            let mut p = vec![0xcf];
            p.extend_from_slice(&v.to_be_bytes());
            p.truncate(1 + rng.below(9));
            if value < bytes.len() {
                let n = p.len().min(bytes.len() - value);
                bytes[value..value + n].copy_from_slice(&p[..n]);
            }
            return;
        }
    };
    let n = patch.len().min(bytes.len() - at);
    bytes[at..at + n].copy_from_slice(&patch[..n]);
}

/// One case: a seed and 1 to 4 mutations.
fn make_case(seed: u64, case: u64, seeds: &[(String, Vec<u8>)], layouts: &[Layout]) -> Vec<u8> {
    let mut rng = Rng::for_case(seed, case);
    let pick = rng.below(seeds.len());
    let mut bytes = seeds[pick].1.clone();
    let layout = &layouts[pick];
    for _ in 0..1 + rng.below(4) {
        if bytes.is_empty() {
            break;
        }
        let len = bytes.len();
        match rng.below(12) {
            0 => {
                let i = rng.below(len);
                bytes[i] ^= 1 << rng.below(8);
            }
            1 => {
                // Mostly in the headers.
                let span = if rng.chance(3) { len } else { len.min(512) };
                let i = rng.below(span);
                bytes[i] = rng.next() as u8;
            }
            2 => {
                let width = [1, 2, 4, 8][rng.below(4)];
                let v = interesting(len, &mut rng);
                write_le(&mut bytes, rng.below(len), width, v);
            }
            3..=5 if !layout.fields.is_empty() => {
                let f = layout.fields[rng.below(layout.fields.len())];
                let v = if rng.chance(4) {
                    le(&bytes, f.at, f.width)
                        .unwrap_or(0)
                        .wrapping_add(rng.below(9) as u64)
                        .wrapping_sub(4)
                } else {
                    interesting(len, &mut rng)
                };
                write_le(&mut bytes, f.at, f.width, v);
            }
            6 | 7 if !layout.msgpack.is_empty() => {
                let region = layout.msgpack[rng.below(layout.msgpack.len())];
                mutate_msgpack(&mut bytes, region, &mut rng);
            }
            8 => {
                let cut = if rng.chance(2) && !layout.cuts.is_empty() {
                    layout.cuts[rng.below(layout.cuts.len())]
                } else {
                    rng.below(len)
                };
                bytes.truncate(cut.min(len));
            }
            9 => {
                // Splice a range of another seed over this one.
                let other = &seeds[rng.below(seeds.len())].1;
                let from = rng.below(other.len());
                let n = rng.below((other.len() - from).min(4096) + 1);
                let at = rng.below(len);
                let n = n.min(len - at);
                bytes[at..at + n].copy_from_slice(&other[from..from + n]);
            }
            10 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(64);
                let fill = rng.next() as u8;
                bytes.splice(at..at, std::iter::repeat_n(fill, n));
            }
            _ => {
                let at = rng.below(len);
                let n = (1 + rng.below(64)).min(len - at);
                bytes.drain(at..at + n);
            }
        }
    }
    bytes
}

// ---------------------------------------------------------------------------------------
// In process

/// Everything the parsers offer for one input; panics are what is being looked for.
fn exercise_parsers(bytes: &[u8]) {
    let _ = read_code_object(bytes);
    let Ok(entries) = parse_bundle(bytes) else {
        return;
    };
    for agent in AGENTS {
        let _ = select_code_object(&entries, agent);
    }
    for entry in &entries {
        let Ok(info) = read_code_object(&entry.data) else {
            continue;
        };
        for kernel in &info.kernels {
            // The launch-side consumer of the metadata, for segments of sane size.
            let size = kernel.kernarg_size as usize;
            if size > 1 << 16 {
                continue;
            }
            let args = vec![0u8; size];
            let mut out = vec![0u8; size];
            let geometry = LaunchGeometry::from_blocks([2, 1, 1], [64, 1, 1], 0).unwrap();
            // As a load and a launch use it: the layout made once, the arguments checked.
            let Ok(layout) = KernargLayout::new(kernel) else {
                continue;
            };
            let source = ArgSource::Packed(&args);
            if layout.check(source).is_ok() {
                // SAFETY: a packed source is a checked slice, and `out` holds the segment.
                unsafe { layout.write(source, &geometry, &mut out) };
            }
        }
    }
}

#[test]
fn fuzz_parsers_in_process() {
    let cases = env_u64("HIPSHIM_FUZZ_CASES", DEFAULT_CASES);
    let seed = env_u64("HIPSHIM_FUZZ_SEED", DEFAULT_SEED);
    let seeds = seeds();
    let layouts: Vec<Layout> = seeds.iter().map(|(_, b)| layout(b)).collect();

    // The panic hook would print every caught panic; report them once, below.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut findings = Vec::new();
    // The panic message, if the parsers panicked on `bytes`.
    let run = |bytes: &[u8]| {
        catch_unwind(AssertUnwindSafe(|| exercise_parsers(bytes)))
            .err()
            .map(|panic| {
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            })
    };
    let replayed = regressions();
    for (name, bytes) in replayed.iter().chain(&seeds) {
        if let Some(message) = run(bytes) {
            findings.push(format!("{name}: panicked: {message}"));
        }
    }
    let start = Instant::now();
    let mut total_bytes = 0usize;
    for case in 0..cases {
        if findings.len() >= MAX_FINDINGS {
            break;
        }
        let bytes = make_case(seed, case, &seeds, &layouts);
        total_bytes += bytes.len();
        if let Some(message) = run(&bytes) {
            let path = save_regression("parse", &bytes);
            findings.push(format!(
                "case {case}: panicked: {message} (kept as {})",
                path.display()
            ));
        }
    }
    let elapsed = start.elapsed();
    std::panic::set_hook(hook);
    println!(
        "in process: {} regression files, {cases} cases (seed {seed:#x}, mean {} bytes) in \
         {:.2} s: {:.0} cases/s",
        replayed.len(),
        total_bytes / cases.max(1) as usize,
        elapsed.as_secs_f64(),
        cases as f64 / elapsed.as_secs_f64()
    );
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

// ---------------------------------------------------------------------------------------
// The built library, in a child process

/// How a child run ended.
enum ChildEnd {
    Finished {
        stdout: String,
    },
    /// Crashed or hung on `case`.
    Broke {
        case: u64,
        how: String,
        stderr: String,
    },
}

/// Writes the seeds for the children, in a directory of this process's own (another run
/// may be writing its set at the same time).
fn write_seed_set(seeds: &[(String, Vec<u8>)]) -> PathBuf {
    let dir = common::target_dir().join(format!("fuzz-seeds/set-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (name, bytes)) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:02}-{name}")), bytes).unwrap();
    }
    dir
}

fn read_seed_set(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy()[3..].to_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Runs cases `first..first + count` (or, with `count` 0, the regression files) in a
/// child; `progress` is where the child writes the case it is on.
fn run_child(seed: u64, first: u64, count: u64, seeds_dir: &Path) -> ChildEnd {
    let progress = std::env::temp_dir().join(format!(
        "hipshim-fuzz-progress-{}-{first}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&progress);
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", "fuzz_child", "--nocapture", "--test-threads=1"]);
    common::clear_loader_env(&mut cmd);
    common::use_simulator(&mut cmd, "gfx942");
    cmd.env("HIPSHIM_FUZZ_CHILD", "1")
        .env("HIPSHIM_FUZZ_FIRST", first.to_string())
        .env("HIPSHIM_FUZZ_COUNT", count.to_string())
        .env("HIPSHIM_FUZZ_SEED", seed.to_string())
        .env("HIPSHIM_FUZZ_SEEDS_DIR", seeds_dir)
        .env("HIPSHIM_FUZZ_PROGRESS", &progress)
        .env("HIPSHIM_FUZZ_LIB_DIR", common::lib_dir())
        .env("HIPSHIM_LOG", "off")
        .env("RUST_BACKTRACE", "0");
    let budget = CHILD_CASE_TIMEOUT + Duration::from_millis(50) * count.max(200) as u32;
    let out = common::run(&mut cmd, budget);
    let on_case = || -> u64 {
        std::fs::read_to_string(&progress)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(u64::MAX)
    };
    if std::env::var_os("HIPSHIM_FUZZ_DEBUG").is_some() {
        eprintln!(
            "child stdout:\n{}\nchild stderr:\n{}",
            out.stdout(),
            out.stderr()
        );
    }
    let end = if out.status.success() && !out.timed_out {
        ChildEnd::Finished {
            stdout: out.stdout(),
        }
    } else {
        ChildEnd::Broke {
            case: on_case(),
            how: if out.timed_out {
                format!("hung (killed after {budget:?})")
            } else {
                out.status.to_string()
            },
            stderr: out.stderr(),
        }
    };
    let _ = std::fs::remove_file(&progress);
    end
}

/// The line in a child's stdout that starts with `key`.
fn child_line(stdout: &str, key: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.find(key).map(|at| &l[at..]))
        .unwrap_or("")
        .to_owned()
}

#[test]
fn fuzz_module_loads_in_child() {
    let cases = env_u64("HIPSHIM_FUZZ_CASES", DEFAULT_CASES);
    let seed = env_u64("HIPSHIM_FUZZ_SEED", DEFAULT_SEED);
    let seeds = seeds();
    let layouts: Vec<Layout> = seeds.iter().map(|(_, b)| layout(b)).collect();
    let dir = write_seed_set(&seeds);
    let mut findings = Vec::new();

    // The regression files and the seeds themselves first.
    match run_child(seed, 0, 0, &dir) {
        ChildEnd::Finished { stdout } => println!("{}", child_line(&stdout, "replayed")),
        ChildEnd::Broke { case, how, stderr } => findings.push(format!(
            "replaying regression file #{case} (or seed): {how}\n{stderr}"
        )),
    }
    let start = Instant::now();
    let mut first = 0;
    let mut histogram = String::new();
    while first < cases && findings.len() < MAX_FINDINGS {
        let count = CHILD_BATCH.min(cases - first);
        match run_child(seed, first, count, &dir) {
            ChildEnd::Finished { stdout } => {
                histogram.push_str(&child_line(&stdout, "results"));
                histogram.push('\n');
                first += count;
            }
            ChildEnd::Broke { case, how, stderr } => {
                let case = if case >= first && case < first + count {
                    case
                } else {
                    first
                };
                let bytes = make_case(seed, case, &seeds, &layouts);
                let path = save_regression("load", &bytes);
                let tail: String = stderr
                    .lines()
                    .rev()
                    .take(15)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                findings.push(format!(
                    "case {case}: the child {how} (kept as {})\n{tail}",
                    path.display()
                ));
                first = case + 1;
            }
        }
    }
    let elapsed = start.elapsed();
    println!(
        "libamdhip64.so in a child: {cases} cases (seed {seed:#x}) in {:.2} s: {:.0} cases/s\n{}",
        elapsed.as_secs_f64(),
        cases as f64 / elapsed.as_secs_f64(),
        histogram.trim_end()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(findings.is_empty(), "{}", findings.join("\n\n"));
}

/// The library's entry points, from the built `libamdhip64.so`.
struct Hip {
    _lib: libloading::Library,
    load_data: unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> i32,
    load_data_ex: unsafe extern "C" fn(
        *mut *mut c_void,
        *const c_void,
        u32,
        *mut c_void,
        *mut *mut c_void,
    ) -> i32,
    load: unsafe extern "C" fn(*mut *mut c_void, *const c_char) -> i32,
    unload: unsafe extern "C" fn(*mut c_void) -> i32,
    get_function: unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> i32,
    register_fat_binary: unsafe extern "C" fn(*const c_void) -> *mut *mut c_void,
    #[allow(clippy::type_complexity)]
    register_function: unsafe extern "C" fn(
        *mut *mut c_void,
        *const c_void,
        *const c_char,
        *const c_char,
        u32,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut i32,
    ),
    unregister_fat_binary: unsafe extern "C" fn(*mut *mut c_void),
    func_get_attributes: unsafe extern "C" fn(*mut [u8; 56], *const c_void) -> i32,
    get_last_error: unsafe extern "C" fn() -> i32,
}

impl Hip {
    fn open(lib_dir: &Path) -> Hip {
        let path = lib_dir.join("libamdhip64.so");
        // SAFETY: the library is hipshim's; its initialisers only set up logging.
        let lib = unsafe { libloading::Library::new(&path) }
            .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the exported function has the declared C signature.
                *unsafe { lib.get($name) }
                    .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy($name)))
            };
        }
        Hip {
            load_data: sym!(b"hipModuleLoadData"),
            load_data_ex: sym!(b"hipModuleLoadDataEx"),
            load: sym!(b"hipModuleLoad"),
            unload: sym!(b"hipModuleUnload"),
            get_function: sym!(b"hipModuleGetFunction"),
            register_fat_binary: sym!(b"__hipRegisterFatBinary"),
            register_function: sym!(b"__hipRegisterFunction"),
            unregister_fat_binary: sym!(b"__hipUnregisterFatBinary"),
            func_get_attributes: sym!(b"hipFuncGetAttributes"),
            get_last_error: sym!(b"hipGetLastError"),
            _lib: lib,
        }
    }
}

/// Memory that holds `bytes` so that they end where 64 KiB of inaccessible memory begin.
struct AtPageEnd {
    base: *mut c_void,
    len: usize,
    start: *const u8,
}

impl AtPageEnd {
    fn new(bytes: &[u8]) -> AtPageEnd {
        const GUARD: usize = 64 << 10;
        let page = 4096usize.max(
            // SAFETY: sysconf has no preconditions.
            unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize,
        );
        let data = bytes.len().div_ceil(page).max(1) * page;
        // SAFETY: a fresh private anonymous mapping, unmapped in Drop; its tail is made
        // inaccessible.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                data + GUARD,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(base, libc::MAP_FAILED, "mmap");
            let guard = base.cast::<u8>().add(data);
            assert_eq!(libc::mprotect(guard.cast(), GUARD, libc::PROT_NONE), 0);
            let start = guard.sub(bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
            AtPageEnd {
                base,
                len: data + GUARD,
                start,
            }
        }
    }
}

impl Drop for AtPageEnd {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

const HIP_SUCCESS: i32 = 0;
const HIP_INVALID_IMAGE: i32 = 200;
const HIP_NO_BINARY_FOR_GPU: i32 = 209;

/// Which of the library's paths one case takes.
#[derive(Clone, Copy, Debug)]
enum Path4 {
    LoadData,
    LoadDataEx,
    Wrapper,
    File,
    Register,
}

/// Runs `bytes` through one path of the library; returns the status it ended with. With
/// `rng`, the `HIPF` wrapper is sometimes damaged too.
fn load_one(hip: &Hip, bytes: &[u8], path: Path4, file: &Path, mut rng: Option<&mut Rng>) -> i32 {
    let mut damage = |one_in: u64, below: usize| {
        let rng = rng.as_deref_mut()?;
        rng.chance(one_in).then(|| rng.below(below))
    };
    static HOST_STUB: u8 = 0;
    let image = AtPageEnd::new(bytes);
    let mut module: *mut c_void = std::ptr::null_mut();
    // SAFETY (all calls below): hipshim's C API with valid out-pointers; the images may be
    // anything, which is the point.
    let status = unsafe {
        match path {
            Path4::LoadData => (hip.load_data)(&mut module, image.start.cast()),
            Path4::LoadDataEx => (hip.load_data_ex)(
                &mut module,
                image.start.cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ),
            Path4::Wrapper | Path4::Register => {
                let mut wrapper = [0u8; 24];
                wrapper[..4].copy_from_slice(&0x4849_5046u32.to_le_bytes());
                wrapper[4..8].copy_from_slice(&1u32.to_le_bytes());
                let mut bundle = image.start as u64;
                if let Some(shift) = damage(8, 64) {
                    bundle = bundle.wrapping_add(shift as u64).wrapping_sub(32);
                }
                wrapper[8..16].copy_from_slice(&bundle.to_le_bytes());
                // Sometimes the wrapper itself is cut short.
                let keep = damage(16, 24).unwrap_or(24);
                let wrapper = AtPageEnd::new(&wrapper[..keep]);
                if let Path4::Wrapper = path {
                    (hip.load_data)(&mut module, wrapper.start.cast())
                } else {
                    let handle = (hip.register_fat_binary)(wrapper.start.cast());
                    if handle.is_null() {
                        (hip.get_last_error)()
                    } else {
                        let name = c"scale".as_ptr();
                        let host = std::ptr::addr_of!(HOST_STUB).cast::<c_void>();
                        (hip.register_function)(
                            handle,
                            host,
                            name,
                            name,
                            0,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                        );
                        let mut attr = [0u8; 56];
                        let status = (hip.func_get_attributes)(&mut attr, host);
                        (hip.unregister_fat_binary)(handle);
                        status
                    }
                }
            }
            Path4::File => {
                std::fs::write(file, bytes).unwrap();
                let name = CString::new(file.as_os_str().as_encoded_bytes()).unwrap();
                (hip.load)(&mut module, name.as_ptr())
            }
        }
    };
    if status == HIP_SUCCESS && !module.is_null() {
        let mut function: *mut c_void = std::ptr::null_mut();
        // SAFETY: a module handle the library just returned.
        unsafe {
            (hip.get_function)(&mut function, module, c"scale".as_ptr());
            (hip.unload)(module);
        }
    }
    // SAFETY: no arguments.
    unsafe { (hip.get_last_error)() };
    status
}

/// Whether `status` is an answer the library may give for an arbitrary image through
/// `path`. Anything else is a finding, like a crash: the parent keeps the case.
fn expected_status(path: Path4, status: i32) -> bool {
    const HIP_INVALID_DEVICE_FUNCTION: i32 = 98;
    const HIP_INVALID_VALUE: i32 = 1;
    matches!(
        status,
        HIP_SUCCESS | HIP_INVALID_IMAGE | HIP_NO_BINARY_FOR_GPU
    ) || (matches!(path, Path4::Register) && status == HIP_INVALID_DEVICE_FUNCTION)
        // An empty file: the ROCm 6 profile's code (`compat::empty_module_file`).
        || (matches!(path, Path4::File) && status == HIP_INVALID_VALUE)
}

/// The child: runs its share of cases through the built library (no-op unless started
/// by `fuzz_module_loads_in_child`).
#[test]
fn fuzz_child() {
    if std::env::var_os("HIPSHIM_FUZZ_CHILD").is_none() {
        return;
    }
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} unset"));
    let first: u64 = var("HIPSHIM_FUZZ_FIRST").parse().unwrap();
    let count: u64 = var("HIPSHIM_FUZZ_COUNT").parse().unwrap();
    let seed: u64 = var("HIPSHIM_FUZZ_SEED").parse().unwrap();
    let seeds = read_seed_set(Path::new(&var("HIPSHIM_FUZZ_SEEDS_DIR")));
    let layouts: Vec<Layout> = seeds.iter().map(|(_, b)| layout(b)).collect();
    let progress = PathBuf::from(var("HIPSHIM_FUZZ_PROGRESS"));
    let hip = Hip::open(Path::new(&var("HIPSHIM_FUZZ_LIB_DIR")));
    let file = std::env::temp_dir().join(format!("hipshim-fuzz-{}.co", std::process::id()));
    let on_case = |case: u64| std::fs::write(&progress, format!("{case}\n")).unwrap();
    const PATHS: [Path4; 5] = [
        Path4::LoadData,
        Path4::LoadDataEx,
        Path4::Wrapper,
        Path4::File,
        Path4::Register,
    ];

    if count == 0 {
        // Every regression file and seed, through every path.
        let replayed = regressions();
        for (i, (name, bytes)) in replayed.iter().enumerate() {
            on_case(i as u64);
            for path in PATHS {
                let status = load_one(&hip, bytes, path, &file, None);
                assert!(
                    expected_status(path, status),
                    "{name} through {path:?}: unexpected status {status}"
                );
            }
        }
        // The seeds load (a code object for gfx90a is refused as such on the gfx942
        // model; a wrapper must hold a bundle).
        for (name, bytes) in &seeds {
            for path in PATHS {
                let status = load_one(&hip, bytes, path, &file, None);
                let elf = bytes.starts_with(b"\x7fELF");
                let ok = match path {
                    Path4::Wrapper | Path4::Register if elf => true,
                    _ if name.contains("gfx90a") => status == HIP_NO_BINARY_FOR_GPU,
                    _ => status == HIP_SUCCESS,
                };
                assert!(ok, "seed {name} through {path:?}: status {status}");
            }
        }
        println!(
            "replayed {} regression files and {} seeds through {} paths of libamdhip64.so",
            replayed.len(),
            seeds.len(),
            PATHS.len()
        );
    } else {
        // status -> (cases, the first few of them)
        let mut statuses = std::collections::BTreeMap::<i32, (u64, Vec<u64>)>::new();
        for case in first..first + count {
            on_case(case);
            let bytes = make_case(seed, case, &seeds, &layouts);
            let mut rng = Rng::for_case(seed ^ 0xc0ff_ee00, case);
            let path = PATHS[rng.below(PATHS.len())];
            let status = load_one(&hip, &bytes, path, &file, Some(&mut rng));
            assert!(
                expected_status(path, status),
                "case {case} through {path:?}: unexpected status {status}"
            );
            let entry = statuses.entry(status).or_default();
            entry.0 += 1;
            if entry.1.len() < 4 {
                entry.1.push(case);
            }
        }
        let summary: Vec<String> = statuses
            .iter()
            .map(|(status, (n, cases))| format!("{status}: {n} (e.g. cases {cases:?})"))
            .collect();
        println!("results (status: cases): {}", summary.join(", "));
    }
    let _ = std::fs::remove_file(&file);
}
