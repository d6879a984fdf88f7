//! The fat-binary wrapper and images without a length: `__hipRegisterFatBinary`'s `HIPF`
//! wrapper, `hipModuleLoadData`'s bare pointer, and the checked reader of foreign memory.

use std::ffi::c_void;

use super::bundle::{bundle_length, index_bundle, CCOB_MAGIC};
use super::metadata::{elf_extent, ELF_MAGIC};
use super::target::select_by;
use super::{
    corrupt, parse_bundle, select_code_object, ByteSource, CodeObjectError, Result,
    MAX_BUNDLE_SIZE, MAX_IMAGE_COPY,
};

/// `"HIPF"` read as a little-endian u32: the first field of clang's fat binary wrapper.
pub const HIP_FATBIN_MAGIC: u32 = 0x4849_5046;
/// The only wrapper version clang emits.
pub const HIP_FATBIN_VERSION: u32 = 1;

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

#[cfg(test)]
mod tests {
    use super::super::bundle::test_images::*;
    use super::super::bundle::CCOB_METHOD_ZSTD;
    use super::super::read_code_object;
    use super::super::test_support::built;
    use super::*;

    fn wrapper_for(bundle: &'static [u8]) -> FatbinWrapper {
        FatbinWrapper {
            magic: HIP_FATBIN_MAGIC,
            version: HIP_FATBIN_VERSION,
            bundle: bundle.as_ptr(),
            reserved: std::ptr::null(),
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
    fn images_without_a_length_copy_each_ccob_version_exactly() {
        let plain = &built().bundle;
        let frame = zstd::bulk::compress(plain, 3).unwrap();
        for version in [1, 2, 3] {
            let ccob = make_ccob(version, CCOB_METHOD_ZSTD, plain.len(), &frame);
            // SAFETY: any pointer is allowed.
            let copied = unsafe { image_from_memory(at_page_end(&ccob).as_ptr().cast()) };
            assert_eq!(copied.unwrap(), ccob, "CCOB v{version}");
        }
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
}
