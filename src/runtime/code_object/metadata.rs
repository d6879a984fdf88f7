//! ELF code objects and their msgpack metadata: kernels, their arguments, hidden arguments.

use hsa_abi::msgpack::{self, Reader};
use object::elf::{FileHeader64, EM_AMDGPU};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;
use rmpv::Value;
use std::collections::HashMap;
use std::ops::Range;

use super::target::TargetId;
use super::{
    corrupt, ByteSource, CodeObjectError, Result, MAX_BUNDLE_SIZE, MAX_ELF_SECTIONS,
    MAX_METADATA_DEPTH,
};

/// ELF note type of the msgpack metadata (LLVM `ELF.h`: `NT_AMDGPU_METADATA = 32`).
pub const NT_AMDGPU_METADATA: u32 = 32;

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

pub(super) const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// The extent of an ELF64 file from its headers alone: the furthest end of the program
/// header table, each segment's file bytes, the section header table and each section's
/// file bytes (all of which [`read_code_object`] checks are present).
pub(super) fn elf_extent(src: &(impl ByteSource + ?Sized)) -> Result<u64> {
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
    /// `.uniform_work_group_size` (v5+) is 1: the compiler assumed every work-group full, so a
    /// grid in work-items must be a multiple of the block; false when absent.
    pub uniform_work_group_size: bool,
    /// `.sgpr_count`: scalar registers per wave; 0 when absent.
    pub sgpr_count: u32,
    /// `.vgpr_count`: vector registers per work-item (ArchVGPRs); 0 when absent.
    pub vgpr_count: u32,
    /// `.agpr_count`: accumulation registers per work-item (gfx90a+); 0 when absent.
    pub agpr_count: u32,
    /// `.args`, in kernarg order: explicit arguments first, then hidden ones.
    pub args: Vec<KernelArg>,
}

#[cfg(test)]
impl KernelInfo {
    /// A kernel `k` without arguments that needs only these resources: what the launch-limit
    /// and occupancy tests vary.
    pub fn with_resources(max_flat: u32, lds: u32, sgpr: u32, vgpr: u32, agpr: u32) -> Self {
        KernelInfo {
            name: "k".into(),
            symbol: "k.kd".into(),
            kernarg_size: 0,
            kernarg_align: 8,
            group_segment_fixed_size: lds,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: max_flat,
            wavefront_size: 64,
            uses_dynamic_stack: false,
            uniform_work_group_size: false,
            sgpr_count: sgpr,
            vgpr_count: vgpr,
            agpr_count: agpr,
            args: Vec::new(),
        }
    }
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

/// A code object's metadata, indexed in one pass over its note without decoding the kernels:
/// the header fields, and where each kernel's map lies, by `.name`. [`CodeObjectIndex::kernel`]
/// decodes one kernel's map when that kernel is first needed, so a library of thousands of
/// kernels pays only for those it launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObjectIndex {
    /// 3, 4, 5 or 6: from `amdhsa.version`, else from `e_ident[EI_ABIVERSION]`.
    pub code_object_version: u32,
    /// ISA name, e.g. `amdgcn-amd-amdhsa--gfx942`: `amdhsa.target` if present, else derived
    /// from the ELF `e_flags`.
    pub target: String,
    /// Each `amdhsa.kernels` entry, in note order: its `.name` and its map's byte range in
    /// the code object.
    entries: Vec<(Box<[u8]>, Range<usize>)>,
    /// Name → position in `entries` (the last entry of a name wins, as it did when every
    /// kernel was decoded into one map).
    by_name: HashMap<Box<[u8]>, usize>,
}

impl CodeObjectIndex {
    /// Indexes the code object `elf`: checks the ELF header and that its file is complete,
    /// and walks the metadata note once (a kernel entry that is not a map or has no string
    /// `.name` is an error here; its other fields are checked when it is decoded).
    pub fn new(elf: &[u8]) -> Result<CodeObjectIndex> {
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

        let desc =
            find_metadata_note(header, endian, elf)?.ok_or(CodeObjectError::MissingMetadata)?;
        // `desc` borrows from `elf`: ranges in it become ranges in the code object.
        let base = desc.as_ptr() as usize - elf.as_ptr() as usize;
        let mut note = Reader::new(desc);
        let Some(fields) = note.map_len()? else {
            // Whatever it is, it must still be well-formed msgpack.
            decode_value(&mut note)?;
            return Err(CodeObjectError::BadMetadata(
                "metadata root is not a map".into(),
            ));
        };
        let (mut version, mut target, mut kernels) = (None, None, None);
        for _ in 0..fields {
            match note.str()? {
                Some(b"amdhsa.version") if version.is_none() => {
                    version = Some(version_from_metadata(&decode_value(&mut note)?)?);
                }
                Some(b"amdhsa.target") if target.is_none() => {
                    let v = decode_value(&mut note)?;
                    let t = v.as_str().ok_or_else(|| {
                        CodeObjectError::BadMetadata("amdhsa.target is not a string".into())
                    })?;
                    target = Some(t.to_owned());
                }
                Some(b"amdhsa.kernels") if kernels.is_none() => {
                    let Some(count) = note.array_len()? else {
                        return Err(CodeObjectError::BadMetadata(
                            "amdhsa.kernels is not an array".into(),
                        ));
                    };
                    let mut entries = Vec::with_capacity((count as usize).min(desc.len()));
                    for _ in 0..count {
                        let start = note.position();
                        let name = kernel_name(&mut note)?;
                        entries.push((name, base + start..base + note.position()));
                    }
                    kernels = Some(entries);
                }
                _ => note.skip()?,
            }
        }
        let code_object_version = match version {
            Some(v) => v,
            // ELFABIVERSION_AMDGPU_HSA_V3 = 1 ... V6 = 4.
            None if abi_version >= ELFABIVERSION_AMDGPU_HSA_V3 => u32::from(abi_version) + 2,
            None => return Err(CodeObjectError::BadMetadata("no amdhsa.version".into())),
        };
        let target = match target {
            Some(t) => t,
            None => target_from_e_flags(flags, abi_version)?.isa_name(),
        };
        let entries = kernels.unwrap_or_default();
        let mut by_name = HashMap::with_capacity(entries.len());
        for (i, (name, _)) in entries.iter().enumerate() {
            by_name.insert(name.clone(), i);
        }
        Ok(CodeObjectIndex {
            code_object_version,
            target,
            entries,
            by_name,
        })
    }

    /// The `.name` of every kernel the metadata lists, in note order.
    pub fn kernel_names(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter().map(|(name, _)| &**name)
    }

    /// Whether the metadata lists a kernel whose `.name` is `name`.
    pub fn has_kernel(&self, name: &[u8]) -> bool {
        self.by_name.contains_key(name)
    }

    /// The metadata of the kernel whose `.name` is `name`, decoded from `elf` (the code object
    /// this index was made from); `None` when no kernel has that name.
    pub fn kernel(&self, elf: &[u8], name: &[u8]) -> Result<Option<KernelInfo>> {
        match self.by_name.get(name) {
            Some(&i) => self.decode(elf, i).map(Some),
            None => Ok(None),
        }
    }

    fn decode(&self, elf: &[u8], i: usize) -> Result<KernelInfo> {
        let range = self.entries[i].1.clone();
        let mut map = elf.get(range).ok_or_else(|| {
            CodeObjectError::BadMetadata("kernel metadata outside the code object".into())
        })?;
        let value = rmpv::decode::read_value_with_max_depth(&mut map, MAX_METADATA_DEPTH)
            .map_err(|e| CodeObjectError::BadMetadata(format!("msgpack: {e}")))?;
        kernel_from_metadata(&value)
    }
}

/// Reads an AMDGPU code object's metadata note (code object v3 to v6), every kernel decoded.
pub fn read_code_object(elf: &[u8]) -> Result<CodeObjectInfo> {
    let index = CodeObjectIndex::new(elf)?;
    let kernels = (0..index.entries.len())
        .map(|i| index.decode(elf, i))
        .collect::<Result<Vec<_>>>()?;
    Ok(CodeObjectInfo {
        code_object_version: index.code_object_version,
        target: index.target,
        kernels,
    })
}

impl From<msgpack::Error> for CodeObjectError {
    fn from(e: msgpack::Error) -> Self {
        CodeObjectError::BadMetadata(format!("msgpack: {e}"))
    }
}

/// The value that follows, decoded (for the few small ones the index keeps, and to report
/// what is wrong with malformed msgpack as the decoder sees it).
fn decode_value(note: &mut Reader<'_>) -> Result<Value> {
    let mut rest = note.rest();
    let before = rest.len();
    let value = rmpv::decode::read_value_with_max_depth(&mut rest, MAX_METADATA_DEPTH)
        .map_err(|e| CodeObjectError::BadMetadata(format!("msgpack: {e}")))?;
    note.consumed(before - rest.len());
    Ok(value)
}

/// Skips one `amdhsa.kernels` entry, returning its `.name`.
fn kernel_name(note: &mut Reader<'_>) -> Result<Box<[u8]>> {
    let Some(fields) = note.map_len()? else {
        note.skip()?;
        return Err(CodeObjectError::BadMetadata(
            "amdhsa.kernels entry is not a map".into(),
        ));
    };
    let mut name = None;
    for _ in 0..fields {
        if note.str()? == Some(b".name") && name.is_none() {
            match note.str()? {
                Some(n) => name = Some(n),
                None => {
                    return Err(CodeObjectError::BadMetadata(
                        "kernel: .name is not a string".into(),
                    ))
                }
            }
        } else {
            note.skip()?;
        }
    }
    name.map(Box::from)
        .ok_or_else(|| CodeObjectError::BadMetadata("kernel: missing .name".into()))
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
        uniform_work_group_size: optional_u32(map, ".uniform_work_group_size", ctx)? == 1,
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

#[cfg(test)]
mod tests {
    use super::super::test_support::built;
    use super::*;

    #[test]
    fn reads_v5_kernel_metadata() {
        let info = read_code_object(&built().co_v5).unwrap();
        assert_eq!(info.code_object_version, 5);
        assert_eq!(info.target, "amdgcn-amd-amdhsa--gfx942");
        let k = info.kernel("scale").expect("kernel scale");
        assert_eq!(k.symbol, "scale.kd");
        assert_eq!(k.wavefront_size, 64);
        // clang builds HIP kernels for full work-groups unless told otherwise.
        assert!(k.uniform_work_group_size);
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
        // v4 metadata has no such field.
        assert!(!k.uniform_work_group_size);
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
    fn the_index_decodes_only_the_kernel_asked_for() {
        let co = &built().co_v5;
        let index = CodeObjectIndex::new(co).unwrap();
        let info = read_code_object(co).unwrap();
        assert_eq!(index.code_object_version, info.code_object_version);
        assert_eq!(index.target, info.target);
        let names: Vec<&[u8]> = index.kernel_names().collect();
        let expected: Vec<&[u8]> = info.kernels.iter().map(|k| k.name.as_bytes()).collect();
        assert_eq!(names, expected);
        for k in &info.kernels {
            assert!(index.has_kernel(k.name.as_bytes()));
            assert_eq!(
                index.kernel(co, k.name.as_bytes()).unwrap().as_ref(),
                Some(k)
            );
        }
        assert!(!index.has_kernel(b"no_such_kernel"));
        assert_eq!(index.kernel(co, b"no_such_kernel"), Ok(None));
    }

    /// Every msgpack form, nested, in the widths their lengths select.
    fn every_form() -> Value {
        let long = |n: usize| Value::from("x".repeat(n));
        let array16: Vec<Value> = (0..20).map(Value::from).collect();
        let map16: Vec<(Value, Value)> = (0..20)
            .map(|i| (Value::from(format!("k{i}")), Value::from(-i - 100)))
            .collect();
        Value::Map(vec![
            (
                Value::from("ints"),
                Value::Array(vec![
                    Value::from(1),
                    Value::from(-1),
                    Value::from(200u8),
                    Value::from(-100i8),
                    Value::from(60000u16),
                    Value::from(-30000i16),
                    Value::from(4_000_000_000u32),
                    Value::from(-2_000_000_000i32),
                    Value::from(u64::MAX),
                    Value::from(i64::MIN),
                ]),
            ),
            (
                Value::from("floats"),
                Value::Array(vec![Value::F32(1.5), Value::F64(2.5)]),
            ),
            (
                Value::from("other"),
                Value::Array(vec![Value::Nil, Value::from(true), Value::from(false)]),
            ),
            (
                Value::from("strs"),
                Value::Array(vec![long(3), long(40), long(300), long(70_000)]),
            ),
            (
                Value::from("bins"),
                Value::Array(vec![
                    Value::Binary(vec![1; 3]),
                    Value::Binary(vec![2; 300]),
                    Value::Binary(vec![3; 70_000]),
                ]),
            ),
            (
                Value::from("exts"),
                Value::Array(
                    [1, 2, 4, 8, 16, 3, 300, 70_000]
                        .iter()
                        .map(|&n| Value::Ext(7, vec![0; n]))
                        .collect(),
                ),
            ),
            (Value::from("array16"), Value::Array(array16)),
            (Value::from("map16"), Value::Map(map16)),
            (
                Value::from("deep"),
                (0..100).fold(Value::Nil, |v, _| Value::Array(vec![v])),
            ),
        ])
    }

    #[test]
    fn skipping_walks_every_msgpack_form_and_stops_at_the_end() {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &every_form()).unwrap();
        bytes.push(0xc0);
        let mut reader = Reader::new(&bytes);
        reader.skip().unwrap();
        assert_eq!(reader.position(), bytes.len() - 1);
        // Every truncation is an error, never a panic.
        let whole = bytes.len() - 1;
        for len in (0..whole).step_by(97).chain([whole - 1]) {
            let mut reader = Reader::new(&bytes[..len]);
            assert!(reader.skip().is_err(), "prefix of {len} bytes skipped");
        }
        let mut reserved = Reader::new(&[0x91, 0xc1]);
        assert!(reserved.skip().is_err());
    }

    #[test]
    fn kernel_entries_need_a_map_with_a_string_name() {
        let encode = |v: Value| {
            let mut bytes = Vec::new();
            rmpv::encode::write_value(&mut bytes, &v).unwrap();
            bytes
        };
        let name = |entry: Value| {
            let bytes = encode(entry);
            kernel_name(&mut Reader::new(&bytes))
        };
        let entry = |pairs: Vec<(&str, Value)>| {
            Value::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (Value::from(k), v))
                    .collect(),
            )
        };
        assert_eq!(
            name(entry(vec![
                (".args", every_form()),
                (".name", Value::from("k")),
                (".name", Value::from("later"))
            ])),
            Ok(Box::from(&b"k"[..]))
        );
        assert!(name(Value::from(3)).is_err());
        assert!(name(entry(vec![(".symbol", Value::from("k.kd"))])).is_err());
        assert!(name(entry(vec![(".name", Value::from(1))])).is_err());
    }
}
