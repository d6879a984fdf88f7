//! `HSASIM_HIDE=name,...`: entry points this library pretends not to export, so a client's
//! fallback for an older ROCr (ROCm 5.2 lacks `hsa_amd_memory_async_copy_on_engine`, for
//! one) runs on hsasim exactly as it would there: `dlsym` returns null and a lazily bound
//! call fails to resolve.
//!
//! A shared object cannot withdraw an export once loaded, and the dynamic loader finds a
//! symbol by hashing the requested name and then comparing it with the name in the
//! library's `.dynstr`. So when the library is loaded (before any client can look a symbol
//! up), the first byte of each hidden name in the mapped `.dynstr` is changed: the hash
//! chain still leads to the entry, the comparison fails, and the lookup reports the symbol
//! missing. The names are located through the library's own file on disk; a name whose
//! bytes another symbol's name shares (string tables merge common suffixes) is refused
//! rather than hiding two symbols.

use object::elf::{FileHeader64, PF_W, PF_X, PT_LOAD, SHN_UNDEF, SHT_DYNSYM};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;
use std::ffi::{c_void, CStr};

/// What hiding did to the names asked for: hidden ones, and the rest with why not.
#[derive(Debug, Default)]
pub struct HideReport {
    pub hidden: Vec<String>,
    pub refused: Vec<(String, String)>,
}

static REPORT: std::sync::OnceLock<HideReport> = std::sync::OnceLock::new();

/// The entry points `HSASIM_HIDE` hid in this process (empty when it was unset).
pub fn hidden() -> &'static [String] {
    REPORT.get().map_or(&[], |r| &r.hidden)
}

/// Run by the dynamic loader when the library is loaded: hiding must be done before the
/// client's first `dlsym`, which can come before `hsa_init`.
extern "C" fn hide_at_load() {
    let Ok(list) = std::env::var(crate::config::HIDE.name) else {
        return;
    };
    if linked_into_the_program() {
        return;
    }
    // A panic must not unwind into the dynamic loader.
    match std::panic::catch_unwind(|| hide_in_this_library(&list)) {
        Ok(Ok(report)) => {
            for (name, why) in &report.refused {
                eprintln!("hsasim: HSASIM_HIDE: {name} stays visible: {why}");
            }
            let _ = REPORT.set(report);
        }
        Ok(Err(why)) => eprintln!("hsasim: HSASIM_HIDE ignored: {why}"),
        Err(_) => eprintln!("hsasim: HSASIM_HIDE ignored: hiding panicked"),
    }
}

/// Whether this code is part of the program itself (a test executable, or the `hipshim`
/// command, which links the rlib for its settings table) rather than of the loaded library:
/// then there are no exports to hide, and the library the program loads hides its own.
fn linked_into_the_program() -> bool {
    let base = |address: *const c_void| {
        // SAFETY: Dl_info is plain data; all-zero is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer.
        (unsafe { libc::dladdr(address, &mut info) } != 0).then_some(info.dli_fbase)
    };
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave the process.
    let program_entry = unsafe { libc::getauxval(libc::AT_ENTRY) } as *const c_void;
    let here = base(hide_at_load as *const c_void);
    here.is_some() && here == base(program_entry)
}

// The loader calls every function in `.init_array` when the object is loaded.
#[used]
#[link_section = ".init_array"]
static HIDE_AT_LOAD: extern "C" fn() = hide_at_load;

/// Hides each comma-separated name in the loaded object that holds this code.
fn hide_in_this_library(list: &str) -> Result<HideReport, String> {
    // SAFETY: Dl_info is plain data; all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; the address is a function of this
    // object and `info` is a valid out-pointer.
    if unsafe { libc::dladdr(hide_at_load as *const c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return Err("dladdr cannot name this library".into());
    }
    // SAFETY: dladdr succeeded, so dli_fname is a NUL-terminated path the loader owns.
    let file = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let bytes = std::fs::read(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    let (patches, report) = plan_hiding(&bytes, &names).map_err(|e| format!("{file}: {e}"))?;
    for (offset, protection) in patches {
        let address = info.dli_fbase as usize + offset as usize;
        // SAFETY: `address` is the first byte of a `.dynstr` name inside this loaded object
        // (its virtual address plus the load base), in a segment with that protection.
        unsafe { patch_byte(address, protection) }?;
    }
    Ok(report)
}

/// The bytes to change (virtual addresses relative to the load base, with the protection
/// of the segment holding each) for the names that can be hidden.
fn plan_hiding(
    elf_bytes: &[u8],
    names: &[&str],
) -> Result<(Vec<(u64, libc::c_int)>, HideReport), String> {
    let header = FileHeader64::<Endianness>::parse(elf_bytes).map_err(|e| e.to_string())?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let sections = header
        .sections(endian, elf_bytes)
        .map_err(|e| e.to_string())?;
    let dynsym = sections
        .symbols(endian, elf_bytes, SHT_DYNSYM)
        .map_err(|e| e.to_string())?;
    let strtab_address = sections
        .section(dynsym.string_section())
        .map_err(|e| e.to_string())?
        .sh_addr(endian);
    let segments = header
        .program_headers(endian, elf_bytes)
        .map_err(|e| e.to_string())?;
    // Every name's extent in the string table, to refuse names whose bytes are shared.
    let extents: Vec<(u32, usize)> = dynsym
        .iter()
        .filter_map(|sym| {
            let name = dynsym.symbol_name(endian, sym).ok()?;
            Some((sym.st_name.get(endian), name.len()))
        })
        .collect();
    let mut patches = Vec::new();
    let mut report = HideReport::default();
    for &name in names {
        let defined = dynsym.iter().find(|sym| {
            sym.st_shndx.get(endian) != SHN_UNDEF
                && dynsym.symbol_name(endian, sym).ok() == Some(name.as_bytes())
        });
        let Some(symbol) = defined else {
            report
                .refused
                .push((name.into(), "not exported by this library".into()));
            continue;
        };
        let offset = symbol.st_name.get(endian);
        if extents
            .iter()
            .any(|&(o, len)| o < offset && offset < o + len as u32)
        {
            report.refused.push((
                name.into(),
                "its name shares bytes with another symbol's".into(),
            ));
            continue;
        }
        let address = strtab_address + u64::from(offset);
        let segment = segments.iter().find(|p| {
            p.p_type(endian) == PT_LOAD
                && (p.p_vaddr(endian)..p.p_vaddr(endian) + p.p_memsz(endian)).contains(&address)
        });
        let Some(segment) = segment else {
            report
                .refused
                .push((name.into(), "its name is not in a loaded segment".into()));
            continue;
        };
        let flags = segment.p_flags(endian);
        let mut protection = libc::PROT_READ;
        if flags & PF_W != 0 {
            protection |= libc::PROT_WRITE;
        }
        if flags & PF_X != 0 {
            protection |= libc::PROT_EXEC;
        }
        patches.push((address, protection));
        report.hidden.push(name.into());
    }
    Ok((patches, report))
}

/// # Safety
/// `address` must be a byte of this process's mapping of the library whose segment has the
/// protection `restore`.
unsafe fn patch_byte(address: usize, restore: libc::c_int) -> Result<(), String> {
    let page = address & !(4095usize);
    // SAFETY: the page belongs to the library's mapping (caller's contract); making it
    // writable copies it privately (the mapping is MAP_PRIVATE), touching nothing else.
    let unprotected = unsafe {
        libc::mprotect(
            page as *mut c_void,
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    if unprotected != 0 {
        return Err(format!("mprotect: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the page is writable now; `address` is the first byte of a name, and any
    // byte other than the first character's makes the loader's comparison fail.
    unsafe { *(address as *mut u8) ^= 0x20 };
    // SAFETY: as above; this returns the segment's own protection.
    unsafe { libc::mprotect(page as *mut c_void, 4096, restore) };
    Ok(())
}
