//! Code-object loader: readers, executables, symbols.
//!
//! An AMDGPU code object (ELF, `e_machine` EM_AMDGPU) is loaded by mapping its PT_LOAD
//! segments at their virtual addresses inside one fresh 64 KiB-aligned host buffer, applying
//! its dynamic relocations against that base, and registering the buffer as
//! device-accessible. Kernel properties come from the `amdhsa.kernels` metadata note, with
//! the kernel descriptor as fallback.

use crate::agent::Agent;
use crate::capture::HiddenArgSlot;
use crate::error::{HsaError, HsaResult};
use crate::host_map::{map_anon, round_up, unmap};
use crate::memory::{MemoryRegistry, Region, RegionKind};
use hsa_abi::msgpack;
use hsa_abi::*;
use hsasim_isa::GfxModel;
use object::elf::{FileHeader64, PF_X, PT_LOAD, PT_NOTE};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{
    LittleEndian, Object, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget,
};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;

pub const EM_AMDGPU: u16 = 224;
const ELFOSABI_AMDGPU_HSA: u8 = 64;
pub const EF_AMDGPU_MACH_GFX90A: u32 = 0x3f;
pub const EF_AMDGPU_MACH_GFX942: u32 = 0x4c;
const EF_AMDGPU_MACH: u32 = 0xff;
const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_XNACK_ON_V4: u32 = 0x300;
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
const EF_AMDGPU_FEATURE_SRAMECC_OFF_V4: u32 = 0x800;
const NT_AMDGPU_METADATA: u32 = 32;
const R_AMDGPU_32_LOW: u32 = 1;
const R_AMDGPU_32_HIGH: u32 = 2;
const R_AMDGPU_64: u32 = 3;
const R_AMDGPU_RELATIVE64: u32 = 13;
const SEGMENT_ALIGN: u64 = 64 << 10;

#[derive(Debug)]
pub struct CodeObjectReader {
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
pub struct KernelInfo {
    pub kernarg_size: u32,
    pub kernarg_align: u32,
    pub group_size: u32,
    pub private_size: u32,
    pub dynamic_callstack: bool,
    /// The hidden arguments the metadata lists (`.value_kind` `hidden_*`), for packet
    /// capture to decode what a runtime wrote into them.
    pub hidden_args: Vec<HiddenArgSlot>,
}

/// The hidden arguments among a kernel's `.args` (an array of maps).
fn hidden_args_of(note: &mut msgpack::Reader<'_>) -> Result<Vec<HiddenArgSlot>, msgpack::Error> {
    let mut out = Vec::new();
    let Some(count) = note.array_len()? else {
        return Ok(out);
    };
    for _ in 0..count {
        let Some(fields) = note.map_len()? else {
            note.skip()?;
            continue;
        };
        let (mut kind, mut offset, mut size) = (None, None, None);
        for _ in 0..fields {
            match note.str()? {
                Some(b".value_kind") => kind = note.str()?,
                Some(b".offset") => offset = note.uint_value()?,
                Some(b".size") => size = note.uint_value()?,
                _ => note.skip()?,
            }
        }
        if let (Some(kind), Some(offset), Some(size)) = (kind, offset, size) {
            if kind.starts_with(b"hidden_") {
                out.push(HiddenArgSlot {
                    kind: String::from_utf8_lossy(kind).into_owned(),
                    offset: offset as u32,
                    size: size as u32,
                });
            }
        }
    }
    Ok(out)
}

#[derive(Clone, Debug)]
pub struct Symbol {
    pub executable: u64,
    pub agent: hsa_agent_t,
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// `Some` for kernels (`NAME.kd`), `None` for variables.
    pub kernel: Option<KernelInfo>,
}

struct LoadedCodeObject {
    map_base: *mut u8,
    map_len: u64,
    base: u64,
    /// Bytes of the loaded image (the PT_LOAD span rounded to 64 KiB).
    image_len: u64,
    agent: hsa_agent_t,
    /// The code object as the client supplied it (kept for the AMD loader extension's
    /// storage queries).
    storage: Arc<CodeObjectReader>,
}

/// What the AMD loader extension reports about one loaded code object.
#[derive(Clone, Debug)]
pub struct LoadedInfo {
    pub executable: hsa_executable_t,
    pub agent: hsa_agent_t,
    /// `hsa_loaded_code_object_t` handle: the load base.
    pub base: u64,
    pub len: u64,
    pub storage: Arc<CodeObjectReader>,
}

#[derive(Default)]
struct ExecutableState {
    frozen: bool,
    loaded: Vec<LoadedCodeObject>,
    symbols: Vec<Arc<Symbol>>,
    /// `hsa_executable_agent_global_variable_define`: external variables by name.
    defined: HashMap<String, u64>,
}

pub struct Executable {
    state: Mutex<ExecutableState>,
}

// SAFETY: the raw pointers in `LoadedCodeObject` are mappings owned by the executable and
// only unmapped under the state lock at destruction.
unsafe impl Send for Executable {}
// SAFETY: as above.
unsafe impl Sync for Executable {}

#[derive(Default)]
pub struct LoaderState {
    readers: Mutex<HashMap<u64, Arc<CodeObjectReader>>>,
    executables: Mutex<HashMap<u64, Arc<Executable>>>,
    symbols: Mutex<HashMap<u64, Arc<Symbol>>>,
    /// Addresses of the kernel descriptors of every loaded code object (what a dispatch
    /// packet's `kernel_object` may name), each with its code object's executable segment
    /// `[start, end)`, where its waves' program counters must stay.
    kernel_objects: RwLock<HashMap<u64, (u64, u64)>>,
}

fn isa_of_mach(mach: u32) -> Option<GfxModel> {
    match mach {
        EF_AMDGPU_MACH_GFX942 => Some(GfxModel::Gfx942),
        EF_AMDGPU_MACH_GFX90A => Some(GfxModel::Gfx90a),
        _ => None,
    }
}

fn bad(why: String) -> HsaError {
    tracing::error!(target: "hsasim", "code object rejected: {why}");
    eprintln!("hsasim: code object rejected: {why}");
    HsaError::INVALID_CODE_OBJECT
}

impl LoaderState {
    pub fn add_reader(&self, bytes: Vec<u8>) -> hsa_code_object_reader_t {
        let r = Arc::new(CodeObjectReader { bytes });
        let h = Arc::as_ptr(&r) as u64;
        self.readers.lock().insert(h, r);
        hsa_code_object_reader_t { handle: h }
    }
    pub fn reader(&self, h: hsa_code_object_reader_t) -> HsaResult<Arc<CodeObjectReader>> {
        self.readers
            .lock()
            .get(&h.handle)
            .cloned()
            .ok_or(HsaError::INVALID_CODE_OBJECT_READER)
    }
    pub fn remove_reader(&self, h: hsa_code_object_reader_t) -> HsaResult {
        self.readers
            .lock()
            .remove(&h.handle)
            .map(|_| ())
            .ok_or(HsaError::INVALID_CODE_OBJECT_READER)
    }

    pub fn create_executable(&self) -> hsa_executable_t {
        let e = Arc::new(Executable {
            state: Mutex::new(ExecutableState::default()),
        });
        let h = Arc::as_ptr(&e) as u64;
        self.executables.lock().insert(h, e);
        hsa_executable_t { handle: h }
    }
    pub fn executable(&self, h: hsa_executable_t) -> HsaResult<Arc<Executable>> {
        self.executables
            .lock()
            .get(&h.handle)
            .cloned()
            .ok_or(HsaError::INVALID_EXECUTABLE)
    }
    pub fn destroy_executable(&self, memory: &MemoryRegistry, h: hsa_executable_t) -> HsaResult {
        let e = self
            .executables
            .lock()
            .remove(&h.handle)
            .ok_or(HsaError::INVALID_EXECUTABLE)?;
        let mut st = e.state.lock();
        let mut syms = self.symbols.lock();
        let mut kernels = self.kernel_objects.write();
        for s in st.symbols.drain(..) {
            syms.remove(&(Arc::as_ptr(&s) as u64));
            if s.kernel.is_some() {
                kernels.remove(&s.address);
            }
        }
        for lco in st.loaded.drain(..) {
            memory.remove_at(lco.base, |r| r.kind == RegionKind::CodeObject);
            // SAFETY: the mapping was created by `load` and has just been unregistered, so
            // no new dispatch can reach it (in-flight dispatches are the client's bug, as
            // with ROCr).
            unsafe { unmap(lco.map_base, lco.map_len) };
        }
        Ok(())
    }
    pub fn symbol(&self, h: hsa_executable_symbol_t) -> HsaResult<Arc<Symbol>> {
        self.symbols
            .lock()
            .get(&h.handle)
            .cloned()
            .ok_or(HsaError::INVALID_EXECUTABLE_SYMBOL)
    }
    pub fn clear(&self) {
        self.readers.lock().clear();
        self.executables.lock().clear();
        self.symbols.lock().clear();
        self.kernel_objects.write().clear();
    }

    /// The symbol name (`NAME.kd`) and properties of the loaded kernel descriptor at
    /// `address`.
    pub fn kernel_at(&self, address: u64) -> Option<(String, KernelInfo)> {
        self.symbols
            .lock()
            .values()
            .find(|s| s.address == address)
            .and_then(|s| Some((s.name.clone(), s.kernel.clone()?)))
    }

    /// True when `address` is the kernel descriptor of a kernel in a loaded code object.
    pub fn is_kernel_object(&self, address: u64) -> bool {
        self.kernel_objects.read().contains_key(&address)
    }

    /// The code `[start, end)` of the loaded kernel whose descriptor is at `address`.
    pub fn kernel_code(&self, address: u64) -> Option<(u64, u64)> {
        self.kernel_objects.read().get(&address).copied()
    }

    /// `hsa_executable_load_agent_code_object`.
    pub fn load(
        &self,
        memory: &MemoryRegistry,
        exec_handle: hsa_executable_t,
        agent: &Arc<Agent>,
        reader: &Arc<CodeObjectReader>,
    ) -> HsaResult<hsa_loaded_code_object_t> {
        let bytes = &reader.bytes[..];
        let exec = self.executable(exec_handle)?;
        let mut st = exec.state.lock();
        if st.frozen {
            return Err(HsaError::FROZEN_EXECUTABLE);
        }
        if !agent.is_gpu() {
            return Err(HsaError::INVALID_AGENT);
        }
        check_header(bytes, agent.model)?;
        let file = object::read::elf::ElfFile64::<LittleEndian>::parse(bytes)
            .map_err(|e| bad(format!("not a parsable ELF64: {e}")))?;
        let endian = file.endian();

        // Map the PT_LOAD image.
        let mut span = 0u64;
        for ph in file.elf_program_headers() {
            if ph.p_type(endian) == PT_LOAD {
                let end = ph.p_vaddr(endian).checked_add(ph.p_memsz(endian));
                span = span.max(end.ok_or_else(|| bad("segment end overflows".into()))?);
            }
        }
        if span == 0 || span > (1 << 34) {
            return Err(bad(format!(
                "PT_LOAD span of {span:#x} bytes is empty or absurd"
            )));
        }
        // The executable segments' span: the code a kernel of this object may run (data
        // segments, which follow it, are not).
        let text = file
            .elf_program_headers()
            .iter()
            .filter(|ph| ph.p_type(endian) == PT_LOAD && ph.p_flags(endian) & PF_X != 0)
            .map(|ph| (ph.p_vaddr(endian), ph.p_vaddr(endian) + ph.p_memsz(endian)))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
            .unwrap_or((0, span));
        let image = round_up(span, SEGMENT_ALIGN).ok_or(HsaError::OUT_OF_RESOURCES)?;
        let map_len = image + SEGMENT_ALIGN;
        let map_base = map_anon(map_len)?;
        let base = round_up(map_base as u64, SEGMENT_ALIGN).ok_or(HsaError::OUT_OF_RESOURCES)?;
        let loaded = LoadedCodeObject {
            map_base,
            map_len,
            base,
            image_len: image,
            agent: agent.handle(),
            storage: reader.clone(),
        };
        let result = (|| -> HsaResult<Vec<Arc<Symbol>>> {
            for ph in file.elf_program_headers() {
                if ph.p_type(endian) != PT_LOAD {
                    continue;
                }
                let data = ph
                    .data(endian, bytes)
                    .map_err(|_| bad("PT_LOAD file range outside the file".into()))?;
                let filesz = data.len() as u64;
                if filesz > ph.p_memsz(endian) {
                    return Err(bad("PT_LOAD filesz > memsz".into()));
                }
                // SAFETY: vaddr + filesz <= vaddr + memsz <= span <= image, inside the
                // fresh mapping at `base`; the source is the parsed file slice.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        (base + ph.p_vaddr(endian)) as *mut u8,
                        data.len(),
                    )
                };
            }
            apply_relocations(&file, base, span, &st.defined)?;
            let metadata = read_metadata(&file, bytes);
            collect_symbols(
                &file,
                base,
                span,
                exec_handle.handle,
                agent.handle(),
                &metadata,
            )
        })();
        let symbols = match result {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: the mapping was created above and never published.
                unsafe { unmap(map_base, map_len) };
                return Err(e);
            }
        };
        memory.add(Region {
            start: base,
            host: base,
            len: image,
            kind: RegionKind::CodeObject,
            owner: agent.handle(),
            global_flags: 0,
            user_data: 0,
            mapped_len: image,
        });
        let mut reg = self.symbols.lock();
        let mut kernels = self.kernel_objects.write();
        for s in &symbols {
            if s.kernel.is_some() {
                kernels.insert(s.address, (base + text.0, base + text.1));
            }
            tracing::debug!(target: "hsasim", name = %s.name, address = format_args!("{:#x}", s.address), kernel = s.kernel.is_some(), "symbol loaded");
            reg.insert(Arc::as_ptr(s) as u64, s.clone());
        }
        st.symbols.extend(symbols);
        st.loaded.push(loaded);
        Ok(hsa_loaded_code_object_t { handle: base })
    }

    pub fn freeze(&self, h: hsa_executable_t) -> HsaResult {
        let e = self.executable(h)?;
        let mut st = e.state.lock();
        if st.frozen {
            return Err(HsaError::FROZEN_EXECUTABLE);
        }
        st.frozen = true;
        Ok(())
    }

    pub fn define_global(&self, h: hsa_executable_t, name: &str, address: u64) -> HsaResult {
        let e = self.executable(h)?;
        let mut st = e.state.lock();
        if st.frozen {
            return Err(HsaError::FROZEN_EXECUTABLE);
        }
        if st.defined.contains_key(name) || st.symbols.iter().any(|s| s.name == name) {
            return Err(HsaError::VARIABLE_ALREADY_DEFINED);
        }
        st.defined.insert(name.to_string(), address);
        Ok(())
    }

    pub fn is_frozen(&self, h: hsa_executable_t) -> HsaResult<bool> {
        Ok(self.executable(h)?.state.lock().frozen)
    }

    /// Every live executable's handle (creation order is not tracked; sorted by handle).
    pub fn executables(&self) -> Vec<hsa_executable_t> {
        let mut v: Vec<_> = self.executables.lock().keys().copied().collect();
        v.sort_unstable();
        v.into_iter()
            .map(|handle| hsa_executable_t { handle })
            .collect()
    }

    /// The loaded code objects of one executable, in load order.
    pub fn loaded_of(&self, h: hsa_executable_t) -> HsaResult<Vec<LoadedInfo>> {
        let e = self.executable(h)?;
        let st = e.state.lock();
        Ok(st
            .loaded
            .iter()
            .map(|l| LoadedInfo {
                executable: h,
                agent: l.agent,
                base: l.base,
                len: l.image_len,
                storage: l.storage.clone(),
            })
            .collect())
    }

    /// Every loaded code object of every executable.
    pub fn all_loaded(&self) -> Vec<LoadedInfo> {
        self.executables()
            .into_iter()
            .flat_map(|e| self.loaded_of(e).unwrap_or_default())
            .collect()
    }

    pub fn symbols_of(&self, h: hsa_executable_t) -> HsaResult<Vec<Arc<Symbol>>> {
        Ok(self.executable(h)?.state.lock().symbols.clone())
    }

    /// Kernels are found by their descriptor name (`NAME.kd`, as ROCr names them); a bare
    /// kernel name also finds its `.kd` for convenience.
    pub fn find_symbol(
        &self,
        h: hsa_executable_t,
        name: &str,
        agent: Option<hsa_agent_t>,
    ) -> HsaResult<Arc<Symbol>> {
        let syms = self.symbols_of(h)?;
        let matches = |s: &&Arc<Symbol>, n: &str| s.name == n && agent.is_none_or(|a| a == s.agent);
        syms.iter()
            .find(|s| matches(s, name))
            .or_else(|| {
                let kd = format!("{name}.kd");
                syms.iter().find(|s| matches(s, &kd))
            })
            .cloned()
            .ok_or(HsaError::INVALID_SYMBOL_NAME)
    }
}

/// Checks machine, OS ABI, code object version and target (processor and features)
/// against the agent before anything is mapped.
pub fn check_header(bytes: &[u8], model: GfxModel) -> HsaResult {
    let hdr = FileHeader64::<LittleEndian>::parse(bytes)
        .map_err(|e| bad(format!("not an ELF64 file: {e}")))?;
    let endian = LittleEndian;
    let machine = hdr.e_machine(endian);
    if machine != EM_AMDGPU {
        return Err(bad(format!(
            "e_machine is {machine}, not EM_AMDGPU ({EM_AMDGPU})"
        )));
    }
    let ident = hdr.e_ident();
    if ident.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(bad(format!("OS ABI {} is not AMDGPU_HSA", ident.os_abi)));
    }
    // ABI version 1 = code object v3, 2 = v4, 3 = v5, 4 = v6; v2 and older are not loaded.
    let abi = ident.abi_version;
    if !(1..=4).contains(&abi) {
        return Err(bad(format!("code object ABI version {abi} is not v3..v6")));
    }
    let flags = hdr.e_flags(endian);
    let mach = flags & EF_AMDGPU_MACH;
    let agent_isa = crate::agent::isa_for(model).name;
    let Some(obj_model) = isa_of_mach(mach) else {
        tracing::error!(target: "hsasim", "code object for EF_AMDGPU_MACH {mach:#x} cannot run on agent ISA {agent_isa}");
        eprintln!(
            "hsasim: code object for EF_AMDGPU_MACH {mach:#x} cannot run on agent ISA {agent_isa}"
        );
        return Err(HsaError::INVALID_ISA);
    };
    let xnack_on = if abi == 1 {
        flags & EF_AMDGPU_FEATURE_XNACK_V3 != 0
    } else {
        flags & EF_AMDGPU_FEATURE_XNACK_V4 == EF_AMDGPU_FEATURE_XNACK_ON_V4
    };
    let sramecc_off =
        abi >= 2 && flags & EF_AMDGPU_FEATURE_SRAMECC_V4 == EF_AMDGPU_FEATURE_SRAMECC_OFF_V4;
    if obj_model != model || xnack_on || sramecc_off {
        let obj = format!(
            "amdgcn-amd-amdhsa--{}{}{}",
            obj_model.processor(),
            if sramecc_off { ":sramecc-" } else { "" },
            if xnack_on { ":xnack+" } else { "" }
        );
        tracing::error!(target: "hsasim", "code object ISA {obj} is incompatible with agent ISA {agent_isa}");
        eprintln!("hsasim: code object ISA {obj} is incompatible with agent ISA {agent_isa}");
        return Err(HsaError::INVALID_ISA);
    }
    Ok(())
}

fn apply_relocations(
    file: &object::read::elf::ElfFile64<LittleEndian>,
    base: u64,
    span: u64,
    defined: &HashMap<String, u64>,
) -> HsaResult {
    let Some(relocs) = file.dynamic_relocations() else {
        return Ok(());
    };
    let dynsym = file.dynamic_symbol_table();
    for (offset, r) in relocs {
        let RelocationFlags::Elf { r_type } = r.flags() else {
            return Err(bad("non-ELF relocation".into()));
        };
        let width = if r_type == R_AMDGPU_64 || r_type == R_AMDGPU_RELATIVE64 {
            8
        } else {
            4
        };
        if offset.checked_add(width).is_none_or(|end| end > span) {
            return Err(bad(format!("relocation at {offset:#x} outside the image")));
        }
        let symbol_value = || -> HsaResult<u64> {
            let RelocationTarget::Symbol(idx) = r.target() else {
                return Ok(0);
            };
            let sym = dynsym
                .as_ref()
                .and_then(|t| t.symbol_by_index(idx).ok())
                .ok_or_else(|| bad(format!("relocation at {offset:#x} names a missing symbol")))?;
            if !sym.is_undefined() {
                return Ok(base + sym.address());
            }
            let name = sym.name().unwrap_or("");
            defined.get(name).copied().ok_or_else(|| {
                tracing::error!(target: "hsasim", "code object needs external variable `{name}`, which is not defined (hsa_executable_agent_global_variable_define)");
                HsaError::VARIABLE_UNDEFINED
            })
        };
        let place = (base + offset) as *mut u8;
        let value = match r_type {
            R_AMDGPU_RELATIVE64 => base.wrapping_add(r.addend() as u64),
            R_AMDGPU_64 | R_AMDGPU_32_LOW | R_AMDGPU_32_HIGH => {
                symbol_value()?.wrapping_add(r.addend() as u64)
            }
            0 => continue,
            other => {
                return Err(bad(format!(
                    "unsupported dynamic relocation type {other} at {offset:#x}"
                )))
            }
        };
        // SAFETY: the place lies inside the image (checked above); unaligned writes are
        // fine for any relocation placement.
        unsafe {
            match r_type {
                R_AMDGPU_32_LOW => std::ptr::write_unaligned(place.cast::<u32>(), value as u32),
                R_AMDGPU_32_HIGH => {
                    std::ptr::write_unaligned(place.cast::<u32>(), (value >> 32) as u32)
                }
                _ => std::ptr::write_unaligned(place.cast::<u64>(), value),
            }
        }
    }
    Ok(())
}

/// Kernel properties from the `amdhsa.kernels` msgpack note, keyed by descriptor symbol.
fn read_metadata(
    file: &object::read::elf::ElfFile64<LittleEndian>,
    bytes: &[u8],
) -> HashMap<String, KernelInfo> {
    let mut out = HashMap::new();
    let endian = file.endian();
    for ph in file.elf_program_headers() {
        if ph.p_type(endian) != PT_NOTE {
            continue;
        }
        let Ok(Some(mut notes)) = ph.notes(endian, bytes) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.name() != b"AMDGPU" || note.n_type(endian) != NT_AMDGPU_METADATA {
                continue;
            }
            match kernels_of_note(note.desc()) {
                Ok(kernels) => out.extend(kernels),
                Err(e) => {
                    tracing::warn!(target: "hsasim", "unparsable AMDGPU metadata note ({e}); using kernel descriptors")
                }
            }
        }
    }
    out
}

/// The kernels one metadata note lists, by descriptor symbol. One pass that reads the few
/// fields the loader uses and skips everything else without decoding it: a library's note
/// describes thousands of kernels.
fn kernels_of_note(desc: &[u8]) -> Result<Vec<(String, KernelInfo)>, msgpack::Error> {
    let mut note = msgpack::Reader::new(desc);
    let mut out = Vec::new();
    let Some(fields) = note.map_len()? else {
        return Ok(out);
    };
    for _ in 0..fields {
        if note.str()? != Some(&b"amdhsa.kernels"[..]) {
            note.skip()?;
            continue;
        }
        let Some(count) = note.array_len()? else {
            note.skip()?;
            continue;
        };
        for _ in 0..count {
            let Some(entry_fields) = note.map_len()? else {
                note.skip()?;
                continue;
            };
            let mut symbol = None;
            let mut info = KernelInfo {
                kernarg_size: 0,
                kernarg_align: 16,
                group_size: 0,
                private_size: 0,
                dynamic_callstack: false,
                hidden_args: Vec::new(),
            };
            for _ in 0..entry_fields {
                let field = match note.str()? {
                    Some(b".symbol") => {
                        symbol = note.str()?;
                        continue;
                    }
                    Some(b".args") => {
                        info.hidden_args = hidden_args_of(&mut note)?;
                        continue;
                    }
                    Some(b".uses_dynamic_stack") => {
                        info.dynamic_callstack = note.bool_value()?.unwrap_or(false);
                        continue;
                    }
                    Some(b".kernarg_segment_size") => &mut info.kernarg_size,
                    Some(b".kernarg_segment_align") => &mut info.kernarg_align,
                    Some(b".group_segment_fixed_size") => &mut info.group_size,
                    Some(b".private_segment_fixed_size") => &mut info.private_size,
                    _ => {
                        note.skip()?;
                        continue;
                    }
                };
                if let Some(value) = note.uint_value()? {
                    *field = value as u32;
                }
            }
            if let Some(symbol) = symbol {
                out.push((String::from_utf8_lossy(symbol).into_owned(), info));
            }
        }
    }
    Ok(out)
}

fn collect_symbols(
    file: &object::read::elf::ElfFile64<LittleEndian>,
    base: u64,
    span: u64,
    executable: u64,
    agent: hsa_agent_t,
    metadata: &HashMap<String, KernelInfo>,
) -> HsaResult<Vec<Arc<Symbol>>> {
    let mut out = Vec::new();
    for sym in file.dynamic_symbols() {
        let Ok(name) = sym.name() else { continue };
        if name.is_empty() || sym.is_undefined() || sym.kind() != object::SymbolKind::Data {
            continue;
        }
        if sym
            .address()
            .checked_add(sym.size())
            .is_none_or(|end| end > span)
        {
            return Err(bad(format!("symbol {name} lies outside the image")));
        }
        let address = base + sym.address();
        let kernel = if name.ends_with(".kd") && sym.size() == 64 {
            Some(metadata.get(name).cloned().unwrap_or_else(|| {
                // SAFETY: 64 bytes at `address` are inside the image (checked above) and
                // the descriptor layout is plain data.
                let kd = unsafe { std::ptr::read_unaligned(address as *const KernelDescriptor) };
                KernelInfo {
                    kernarg_size: kd.kernarg_size,
                    kernarg_align: 16,
                    group_size: kd.group_segment_fixed_size,
                    private_size: kd.private_segment_fixed_size,
                    dynamic_callstack: kd.kernel_code_properties
                        & kernel_code_properties::USES_DYNAMIC_STACK
                        != 0,
                    hidden_args: Vec::new(),
                }
            }))
        } else {
            None
        };
        out.push(Arc::new(Symbol {
            executable,
            agent,
            name: name.to_string(),
            address,
            size: sym.size(),
            kernel,
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value;

    fn map(pairs: Vec<(Value, Value)>) -> Value {
        Value::Map(pairs)
    }

    fn encode(v: &Value) -> Vec<u8> {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, v).unwrap();
        bytes
    }

    #[test]
    fn the_note_yields_each_kernels_sizes_and_skips_the_rest() {
        let args = Value::Array(
            (0..40)
                .map(|i| {
                    map(vec![
                        (".offset".into(), Value::from(i * 8)),
                        (".value_kind".into(), "by_value".into()),
                    ])
                })
                .collect(),
        );
        let note = map(vec![
            (
                "amdhsa.version".into(),
                Value::Array(vec![1.into(), 2.into()]),
            ),
            (
                "amdhsa.kernels".into(),
                Value::Array(vec![
                    map(vec![
                        (".args".into(), args.clone()),
                        (".name".into(), "first".into()),
                        (".symbol".into(), "first.kd".into()),
                        (".kernarg_segment_size".into(), Value::from(300u32)),
                        (".kernarg_segment_align".into(), Value::from(8u32)),
                        (Value::from(7), "a key that is no string".into()),
                        (".group_segment_fixed_size".into(), Value::from(70000u32)),
                        (".private_segment_fixed_size".into(), Value::from(16u32)),
                        (".uses_dynamic_stack".into(), true.into()),
                    ]),
                    "an entry that is no map".into(),
                    map(vec![
                        (".symbol".into(), "second.kd".into()),
                        (".args".into(), args),
                    ]),
                    map(vec![(".name".into(), "no symbol".into())]),
                ]),
            ),
            ("amdhsa.target".into(), "amdgcn-amd-amdhsa--gfx942".into()),
        ]);
        let bytes = encode(&note);
        let kernels: HashMap<_, _> = kernels_of_note(&bytes).unwrap().into_iter().collect();
        assert_eq!(kernels.len(), 2);
        let first = &kernels["first.kd"];
        assert_eq!(
            (
                first.kernarg_size,
                first.kernarg_align,
                first.group_size,
                first.private_size,
                first.dynamic_callstack
            ),
            (300, 8, 70000, 16, true)
        );
        let second = &kernels["second.kd"];
        assert_eq!(
            (
                second.kernarg_size,
                second.kernarg_align,
                second.dynamic_callstack
            ),
            (0, 16, false),
            "absent fields take their defaults"
        );
        // A cut note is an error, never a panic or a partial list.
        for len in [1, bytes.len() / 2, bytes.len() - 1] {
            assert!(kernels_of_note(&bytes[..len]).is_err(), "{len} bytes");
        }
    }
}
