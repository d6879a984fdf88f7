//! Test helpers: build kernels with clang-19, map a code object into host memory, a
//! GuestMemory over explicit ranges, and dispatch packets built by hand.
#![allow(dead_code)]

use hsa_abi::{hsa_kernel_dispatch_packet_t, KernelDescriptor};
use hsasim_isa::{Dispatch, GfxModel, GuestMemory};
use object::{Object, ObjectSegment, ObjectSymbol};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

pub const DEVICE_LIB_DIR: &str = "/tmp/dl";

/// Memory the test allows the device to touch.
#[derive(Default)]
pub struct Ranges(pub Mutex<Vec<(u64, u64)>>);

impl Ranges {
    pub fn add(&self, start: u64, len: u64) {
        self.0.lock().unwrap().push((start, len));
    }
    pub fn add_slice<T>(&self, s: &[T]) {
        self.add(s.as_ptr() as u64, std::mem::size_of_val(s) as u64);
    }
}

impl GuestMemory for Ranges {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        let end = address.checked_add(len)?;
        self.0
            .lock()
            .unwrap()
            .iter()
            .any(|&(s, l)| address >= s && end <= s + l)
            .then_some(address)
    }
}

/// A heap buffer with a chosen alignment (code objects want 64 KiB, packets 64 bytes).
pub struct Aligned {
    storage: Vec<u8>,
    offset: usize,
    pub len: usize,
}

impl Aligned {
    pub fn new(len: usize, align: usize) -> Aligned {
        let storage = vec![0u8; len + align];
        let offset = (align - (storage.as_ptr() as usize % align)) % align;
        Aligned {
            storage,
            offset,
            len,
        }
    }
    pub fn bytes(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + self.len]
    }
    pub fn addr(&self) -> u64 {
        self.storage.as_ptr() as u64 + self.offset as u64
    }
}

fn out_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hsasim-isa-tests-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Device libs are symlinked into one directory (gfx942 borrows gfx940's ISA file).
pub fn ensure_device_libs() {
    let dir = Path::new(DEVICE_LIB_DIR);
    if dir.join("oclc_isa_version_942.bc").exists() {
        return;
    }
    let _ = std::fs::create_dir_all(dir);
    let src = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
    if let Ok(rd) = std::fs::read_dir(src) {
        for e in rd.flatten() {
            let _ = std::os::unix::fs::symlink(e.path(), dir.join(e.file_name()));
        }
    }
    let _ = std::os::unix::fs::symlink(
        src.join("oclc_isa_version_940.bc"),
        dir.join("oclc_isa_version_942.bc"),
    );
}

/// Compiles `source` (a .hip file path) for `model` and code object version `cov`.
pub fn compile(source: &Path, model: GfxModel, cov: u32) -> Vec<u8> {
    compile_as(source, model, cov, false)
}

/// [`compile`], linking AMD's device libraries (for kernels calling `__ockl_*`).
pub fn compile_with_device_libs(source: &Path, model: GfxModel) -> Vec<u8> {
    compile_as(source, model, 5, true)
}

fn compile_as(source: &Path, model: GfxModel, cov: u32, device_libs: bool) -> Vec<u8> {
    ensure_device_libs();
    let stem = source.file_stem().unwrap().to_string_lossy().to_string();
    // Tests run in parallel and may build the same source: one output file per call.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = out_dir().join(format!("{stem}.{}.v{cov}.{seq}.co", model.processor()));
    let status = Command::new("clang++-19")
        .args(["-x", "hip", "-nogpuinc"])
        .arg(if device_libs {
            format!("--rocm-device-lib-path={DEVICE_LIB_DIR}")
        } else {
            "-nogpulib".to_string()
        })
        .arg(format!("--offload-arch={}", model.processor()))
        .args(["--cuda-device-only", "--no-gpu-bundle-output", "-O3"])
        .arg(format!("-mcode-object-version={cov}"))
        .arg(source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang++-19 must be installed (apt-get install clang-19)");
    assert!(status.success(), "clang failed on {}", source.display());
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    bytes
}

pub fn kernel_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(name)
}

/// A code object mapped as the loader would: PT_LOAD segments at their p_vaddr.
pub struct Loaded {
    pub image: Aligned,
    pub symbols: Vec<(String, u64)>,
}

impl Loaded {
    pub fn new(elf: &[u8]) -> Loaded {
        let file = object::File::parse(elf).expect("ELF");
        let mut end = 0u64;
        for seg in file.segments() {
            end = end.max(seg.address() + seg.size());
        }
        let mut image = Aligned::new(end.max(4096) as usize, 65536);
        for seg in file.segments() {
            let data = seg.data().unwrap();
            let a = seg.address() as usize;
            image.bytes()[a..a + data.len()].copy_from_slice(data);
        }
        let symbols = file
            .symbols()
            .filter_map(|s| Some((s.name().ok()?.to_string(), s.address())))
            .collect();
        Loaded { image, symbols }
    }

    pub fn symbol(&self, name: &str) -> u64 {
        let (_, off) = self
            .symbols
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("symbol {name} not found"));
        self.image.addr() + off
    }

    pub fn descriptor(&self, kd: u64) -> KernelDescriptor {
        // SAFETY: kd points into the mapped image (found in its symbol table).
        unsafe { std::ptr::read_unaligned(kd as *const KernelDescriptor) }
    }
}

/// Kernarg memory: explicit arguments, then the code object v5 hidden arguments.
pub struct Kernargs {
    pub buf: Aligned,
}

impl Kernargs {
    pub fn new() -> Kernargs {
        Kernargs {
            buf: Aligned::new(512, 64),
        }
    }
    pub fn put<T: Copy>(&mut self, offset: usize, v: T) {
        let b = self.buf.bytes();
        assert!(offset + std::mem::size_of::<T>() <= b.len());
        // SAFETY: bounds checked just above; unaligned write into a byte buffer.
        unsafe { std::ptr::write_unaligned(b.as_mut_ptr().add(offset) as *mut T, v) };
    }
    /// Hidden arguments of code object v5 (AMDGPUUsage "Code Object V5 Metadata"):
    /// block counts, group sizes, remainders, global offsets, grid dims.
    pub fn put_hidden_v5(&mut self, at: usize, grid: [u32; 3], wg: [u16; 3]) {
        for k in 0..3 {
            self.put(at + 4 * k, grid[k].div_ceil(wg[k] as u32));
            self.put(at + 12 + 2 * k, wg[k]);
            self.put(at + 18 + 2 * k, (grid[k] % wg[k] as u32) as u16);
            self.put(at + 40 + 8 * k, 0u64);
        }
        let dims = if grid[2] > 1 {
            3u16
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        self.put(at + 64, dims);
    }
    pub fn addr(&self) -> u64 {
        self.buf.addr()
    }
}

/// A dispatch packet in memory (the dispatch-ptr SGPRs point at it).
pub fn packet(
    model: GfxModel,
    kd: u64,
    kernarg: u64,
    grid: [u32; 3],
    wg: [u16; 3],
    group_segment: u32,
    mem: &Ranges,
) -> (Dispatch, Box<hsa_kernel_dispatch_packet_t>) {
    let p = Box::new(hsa_kernel_dispatch_packet_t {
        header: 2,
        setup: if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        },
        workgroup_size_x: wg[0],
        workgroup_size_y: wg[1],
        workgroup_size_z: wg[2],
        grid_size_x: grid[0],
        grid_size_y: grid[1],
        grid_size_z: grid[2],
        group_segment_size: group_segment,
        kernel_object: kd,
        kernarg_address: kernarg,
        ..Default::default()
    });
    let addr = &*p as *const _ as u64;
    mem.add(addr, 64);
    (
        Dispatch {
            model,
            packet: *p,
            packet_address: addr,
            queue_address: 0,
            dispatch_id: 7,
            code: None,
        },
        p,
    )
}

pub const MODELS: [GfxModel; 2] = [GfxModel::Gfx942, GfxModel::Gfx90a];

/// A hand-made kernel: a buffer holding a descriptor with no features enabled, whose code
/// starts at +256 (write it with `code_words`). Returns the buffer and the descriptor's
/// address.
pub fn handmade_kernel() -> (Aligned, u64) {
    let mut buf = Aligned::new(4096, 256);
    let kd = hsa_abi::KernelDescriptor {
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        kernarg_size: 0,
        reserved0: [0; 4],
        kernel_code_entry_byte_offset: 256,
        reserved1: [0; 20],
        compute_pgm_rsrc3: 0,
        compute_pgm_rsrc1: 0,
        compute_pgm_rsrc2: 0,
        kernel_code_properties: 0,
        kernarg_preload: 0,
        reserved2: [0; 4],
    };
    // SAFETY: the buffer holds 4096 bytes; the descriptor takes the first 64.
    unsafe {
        std::ptr::write_unaligned(
            buf.bytes().as_mut_ptr() as *mut hsa_abi::KernelDescriptor,
            kd,
        )
    };
    let addr = buf.addr();
    (buf, addr)
}

/// Writes `code` at +256 of a [`handmade_kernel`] buffer.
pub fn code_words(buf: &mut Aligned, code: &[u32]) {
    let bytes = buf.bytes();
    for (k, w) in code.iter().enumerate() {
        bytes[256 + 4 * k..260 + 4 * k].copy_from_slice(&w.to_le_bytes());
    }
}
