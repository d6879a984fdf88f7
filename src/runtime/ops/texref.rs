//! Texture references (ROCm 5 and 6; AMD removed them in ROCm 7), built on texture objects
//! (`texture.rs`).
//!
//! **What the program holds.** A `texture<T, dim, mode>` global is a `textureReference`
//! (88 bytes): its sampling state, its channel format, and a `textureObject` field. clang
//! makes it a device variable of that size and registers the host copy with
//! `__hipRegisterTexture`, as `__hipRegisterVar` does for `__device__` variables; device code
//! reads the device copy's `textureObject` and samples through it. `hipModuleGetTexRef` hands
//! out a host copy of its own for a texture variable of a loaded module.
//!
//! **Binding.** Every bind (`hipBindTexture*`, `hipTexRefSetAddress*`, `hipTexRefSetArray`,
//! `hipTexRefSetMipmappedArray`) makes a texture object from the reference's state and the
//! resource, stores it in the host copy's `textureObject`, destroys the one bound before, and
//! copies the host copy to the device variable on the current device (synchronously, as
//! AMD's runtime does on its null stream). State set later (`hipTexRefSet*Mode`, flags)
//! takes effect at the next bind, as in AMD's runtime. A bind that fails leaves the earlier
//! binding in place.
//!
//! **Beyond the struct.** `textureReference` has no border colour: hipshim keeps the one
//! `hipTexRefSetBorderColor` sets beside the reference and uses it at the next bind (AMD's
//! runtime asserts there). The alignment offset of the last bind is kept the same way; memory
//! from `hipMalloc` is page aligned, and a linear binding needs no alignment at all, so it is
//! nonzero only for a pitch2D binding of a pointer off a 256-byte boundary.

use crate::error::{HipError, HipResult};
use crate::runtime::base::compat::{self, Abi};
use crate::runtime::copy::{self, CopyKind};
use crate::runtime::devices::current;
use crate::runtime::devices::device::Device;
use crate::runtime::image::array::{self, ChannelFormatDesc, HipArray, HipMipmappedArray};
use crate::runtime::image::texture::{self, resource_type, ResourceDesc, TextureDesc};
use crate::runtime::kernel::module::{self, Module};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::sync::{Arc, LazyLock, Weak};

/// `textureReference` (ROCm 5 and 6).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureReference {
    pub normalized: i32,
    pub read_mode: u32,
    pub filter_mode: u32,
    pub address_mode: [u32; 3],
    pub channel_desc: ChannelFormatDesc,
    pub srgb: i32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub texture_object: *mut c_void,
    pub num_channels: i32,
    pub format: u32,
}

const REFERENCE_BYTES: usize = std::mem::size_of::<TextureReference>();

/// `HIP_TRSA_OVERRIDE_FORMAT`: the only flag `hipTexRefSetArray` takes.
pub const OVERRIDE_FORMAT: u32 = 0x01;

const READ_ELEMENT_TYPE: u32 = 0;
const READ_NORMALIZED_FLOAT: u32 = 1;

/// Host copies registered by `__hipRegisterTexture` (their addresses).
static REGISTERED: LazyLock<Mutex<HashSet<usize>>> = LazyLock::new(Default::default);

/// Host copies handed out by `hipModuleGetTexRef`: the module and the variable's name, and
/// the copy each (module, name) got (the same one on every call).
struct ModuleReference {
    module: Weak<Module>,
    name: String,
}
static MODULE_REFERENCES: LazyLock<Mutex<HashMap<usize, ModuleReference>>> =
    LazyLock::new(Default::default);
static MODULE_COPIES: LazyLock<Mutex<HashMap<(usize, String), usize>>> =
    LazyLock::new(Default::default);

/// What a reference has beyond its struct.
#[derive(Clone, Copy, Default)]
struct Extra {
    border_color: [f32; 4],
    offset: usize,
}
static EXTRA: LazyLock<Mutex<HashMap<usize, Extra>>> = LazyLock::new(Default::default);

/// `hipErrorNotSupported` under the ROCm 7 ABI (whose library has no texture references),
/// and on a device without image instructions.
pub fn require_references(device: &Device, call: &str) -> HipResult {
    if compat::abi() >= Abi::Rocm7 {
        tracing::warn!("{call}: texture references do not exist in ROCm 7 (use texture objects)");
        return Err(HipError::NOT_SUPPORTED);
    }
    texture::require_images(device, call)
}

/// A non-null reference, or `hipErrorInvalidValue`.
fn non_null<'a>(texref: *mut TextureReference, call: &str) -> HipResult<&'a mut TextureReference> {
    // SAFETY: HIP's contract: a texture reference is a live `textureReference` (a
    // `texture<>` global or a copy from hipModuleGetTexRef), which the caller may change.
    match unsafe { texref.as_mut() } {
        Some(r) => Ok(r),
        None => {
            tracing::warn!("{call}: null texture reference");
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// The checks every call starts with: the ABI, the device, a reference.
pub fn reference<'a>(
    device: &Device,
    texref: *const TextureReference,
    call: &str,
) -> HipResult<&'a mut TextureReference> {
    require_references(device, call)?;
    non_null(texref as *mut TextureReference, call)
}

/// `__hipRegisterTexture`: the host copy at `host_var` names the device variable `name`.
pub fn register(fat_binary: Arc<module::FatBinary>, host_var: usize, name: String) {
    REGISTERED.lock().insert(host_var);
    module::register_variable(fat_binary, host_var, name, REFERENCE_BYTES);
}

/// Whether `symbol` is a texture reference hipshim knows (registered or from a module).
pub fn is_reference(symbol: *const c_void) -> bool {
    let key = symbol as usize;
    REGISTERED.lock().contains(&key) || MODULE_REFERENCES.lock().contains_key(&key)
}

/// The device copy of `texref` on `device`; `missing` is the answer for a reference hipshim
/// does not know.
fn device_copy(device: &Device, texref: usize, missing: HipError) -> HipResult<usize> {
    let (address, bytes) = if REGISTERED.lock().contains(&texref) {
        module::symbol_on_device(device, texref as *const c_void)?
    } else {
        let found = MODULE_REFERENCES
            .lock()
            .get(&texref)
            .map(|r| (r.module.upgrade(), r.name.clone()));
        match found {
            Some((Some(m), name)) => module::module_get_global(device, &m, &name)?,
            Some((None, name)) => {
                tracing::warn!(%name, "the texture reference's module was unloaded");
                return Err(missing);
            }
            None => {
                tracing::warn!(
                    texref = format_args!("{texref:#x}"),
                    "not a texture reference (neither a registered texture<> variable nor one from hipModuleGetTexRef)"
                );
                return Err(missing);
            }
        }
    };
    if bytes < REFERENCE_BYTES {
        tracing::error!(
            bytes,
            "the device variable is smaller than a textureReference"
        );
        return Err(missing);
    }
    Ok(address)
}

/// The texture descriptor a reference's state stands for.
fn texture_desc(r: &TextureReference, border_color: [f32; 4]) -> TextureDesc {
    TextureDesc {
        address_mode: r.address_mode,
        filter_mode: r.filter_mode,
        read_mode: r.read_mode,
        srgb: r.srgb,
        border_color,
        normalized_coords: r.normalized,
        max_anisotropy: r.max_anisotropy,
        mipmap_filter_mode: r.mipmap_filter_mode,
        mipmap_level_bias: r.mipmap_level_bias,
        min_mipmap_level_clamp: r.min_mipmap_level_clamp,
        max_mipmap_level_clamp: r.max_mipmap_level_clamp,
    }
}

/// Copies the host copy to the device copy at `address`.
fn publish(devices: &[Device], device: &Device, r: &TextureReference, address: usize) -> HipResult {
    let request = copy::CopyRequest::linear(
        address as *mut c_void,
        r as *const TextureReference as *const c_void,
        REFERENCE_BYTES,
        CopyKind::HostToDevice,
    );
    let to = copy::Devices {
        all: devices,
        current: Ok(device),
    };
    // SAFETY: `address` is a device variable of at least REFERENCE_BYTES (`device_copy`);
    // `r` is that many host bytes.
    unsafe { copy::memcpy(to, request) }
}

/// Binds `texref` to `resource` on the current one of `devices` (see the module comment);
/// `offset` is the alignment offset to remember. `missing` answers an unknown reference.
fn bind(
    devices: &[Device],
    texref: *mut TextureReference,
    resource: ResourceDesc,
    offset: usize,
    missing: HipError,
    call: &str,
) -> HipResult {
    let device = current::device(devices)?;
    let r = reference(device, texref, call)?;
    let address = device_copy(device, texref as usize, missing)?;
    let extra = EXTRA
        .lock()
        .get(&(texref as usize))
        .copied()
        .unwrap_or_default();
    let desc = texture_desc(r, extra.border_color);
    let object = texture::create_texture(devices, &resource, &desc, None)?;
    let old = std::mem::replace(&mut r.texture_object, object);
    if let Err(e) = publish(devices, device, r, address) {
        r.texture_object = old;
        let _ = texture::destroy(devices, object, true);
        return Err(e);
    }
    EXTRA
        .lock()
        .insert(texref as usize, Extra { offset, ..extra });
    if !old.is_null() {
        if let Err(e) = texture::destroy(devices, old, true) {
            tracing::warn!(
                old = format_args!("{old:p}"),
                "{call}: the reference's earlier texture object was not a live one ({e:?}); left as it was"
            );
        }
    }
    tracing::debug!(
        texref = format_args!("{texref:p}"),
        object = format_args!("{object:p}"),
        "{call}: texture reference bound"
    );
    Ok(())
}

/// The channel descriptor of the reference's driver format, or of its type when no format
/// was set (`texture<T>` leaves it zero).
fn reference_desc(r: &TextureReference) -> HipResult<ChannelFormatDesc> {
    if r.num_channels == 0 && r.format == 0 {
        Ok(r.channel_desc)
    } else {
        array::desc_of_format(r.format, r.num_channels as u32)
    }
}

/// What `hipBindTexture` and `hipTexRefSetAddress` share: a linear resource, whose buffer
/// descriptor takes any element-aligned address (offset 0).
#[allow(clippy::too_many_arguments)]
fn bind_linear(
    devices: &[Device],
    offset: Option<&mut usize>,
    texref: *mut TextureReference,
    ptr: *const c_void,
    desc: Option<ChannelFormatDesc>,
    bytes: usize,
    missing: HipError,
    call: &str,
) -> HipResult {
    let device = current::device(devices)?;
    let r = reference(device, texref, call)?;
    if ptr.is_null() {
        tracing::warn!("{call}: null device pointer");
        return Err(HipError::INVALID_VALUE);
    }
    let desc = match desc {
        Some(d) => d,
        None => reference_desc(r)?,
    };
    let resource = ResourceDesc {
        res_type: resource_type::LINEAR,
        ptr: ptr as *mut c_void,
        desc,
        width: bytes,
        height: 0,
        pitch: 0,
    };
    bind(devices, texref, resource, 0, missing, call)?;
    if let Some(o) = offset {
        *o = 0;
    }
    Ok(())
}

/// The channel descriptor a runtime-API bind (`hipBindTexture`, `hipBindTexture2D`) is given,
/// after the ABI and device checks; null is hipErrorInvalidValue.
fn runtime_desc(
    devices: &[Device],
    desc: Option<&ChannelFormatDesc>,
    call: &str,
) -> HipResult<ChannelFormatDesc> {
    require_references(current::device(devices)?, call)?;
    desc.copied().ok_or_else(|| {
        tracing::warn!("{call}: null channel descriptor");
        HipError::INVALID_VALUE
    })
}

/// `hipBindTexture`.
pub fn bind_texture(
    devices: &[Device],
    offset: Option<&mut usize>,
    texref: *const TextureReference,
    ptr: *const c_void,
    desc: Option<&ChannelFormatDesc>,
    bytes: usize,
) -> HipResult {
    let call = "hipBindTexture";
    let desc = runtime_desc(devices, desc, call)?;
    let texref = texref as *mut TextureReference;
    bind_linear(
        devices,
        offset,
        texref,
        ptr,
        Some(desc),
        bytes,
        HipError::INVALID_SYMBOL,
        call,
    )
}

/// `hipTexRefSetAddress`: the reference's own format.
pub fn set_address(
    devices: &[Device],
    offset: Option<&mut usize>,
    texref: *mut TextureReference,
    ptr: *const c_void,
    bytes: usize,
) -> HipResult {
    bind_linear(
        devices,
        offset,
        texref,
        ptr,
        None,
        bytes,
        HipError::NOT_FOUND,
        "hipTexRefSetAddress",
    )
}

/// What `hipBindTexture2D` and `hipTexRefSetAddress2D` share: a pitch2D resource. The T#
/// wants its base 256-byte aligned: a pointer off that boundary is bound from the boundary
/// below it, and the distance is reported through `offset` (refused when there is none).
#[allow(clippy::too_many_arguments)]
fn bind_pitch(
    devices: &[Device],
    offset: Option<&mut usize>,
    texref: *mut TextureReference,
    ptr: *const c_void,
    desc: ChannelFormatDesc,
    (width, height, pitch): (usize, usize, usize),
    missing: HipError,
    call: &str,
) -> HipResult {
    let device = current::device(devices)?;
    reference(device, texref, call)?;
    if ptr.is_null() || pitch == 0 {
        tracing::warn!("{call}: null device pointer or zero pitch");
        return Err(HipError::INVALID_VALUE);
    }
    let misalignment = ptr as usize % texture_alignment();
    if misalignment != 0 && offset.is_none() {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            "{call}: the pointer is not 256-byte aligned and there is no offset to report the difference in"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let resource = ResourceDesc {
        res_type: resource_type::PITCH_2D,
        ptr: (ptr as usize - misalignment) as *mut c_void,
        desc,
        width,
        height,
        pitch,
    };
    bind(devices, texref, resource, misalignment, missing, call)?;
    if let Some(o) = offset {
        *o = misalignment;
    }
    Ok(())
}

fn texture_alignment() -> usize {
    crate::runtime::devices::device_props::TEXTURE_ALIGNMENT
}

/// `hipBindTexture2D`.
#[allow(clippy::too_many_arguments)]
pub fn bind_texture_2d(
    devices: &[Device],
    offset: Option<&mut usize>,
    texref: *const TextureReference,
    ptr: *const c_void,
    desc: Option<&ChannelFormatDesc>,
    width: usize,
    height: usize,
    pitch: usize,
) -> HipResult {
    let call = "hipBindTexture2D";
    let desc = runtime_desc(devices, desc, call)?;
    let texref = texref as *mut TextureReference;
    bind_pitch(
        devices,
        offset,
        texref,
        ptr,
        desc,
        (width, height, pitch),
        HipError::INVALID_SYMBOL,
        call,
    )
}

/// `hipTexRefSetAddress2D`: the format the array descriptor gives (`HIP_ARRAY_DESCRIPTOR`'s
/// width, height, format and channels).
pub fn set_address_2d(
    devices: &[Device],
    texref: *mut TextureReference,
    descriptor: Option<(usize, usize, u32, u32)>,
    ptr: *const c_void,
    pitch: usize,
) -> HipResult {
    let call = "hipTexRefSetAddress2D";
    require_references(current::device(devices)?, call)?;
    let Some((width, height, format, channels)) = descriptor else {
        tracing::warn!("{call}: null array descriptor");
        return Err(HipError::INVALID_VALUE);
    };
    let desc = array::desc_of_format(format, channels)?;
    // The driver API has no offset to report: the pointer must be aligned.
    bind_pitch(
        devices,
        None,
        texref,
        ptr,
        desc,
        (width, height, pitch),
        HipError::NOT_FOUND,
        call,
    )
}

/// Which call binds an array: the runtime form (no flags; an unknown reference is
/// hipErrorInvalidSymbol) or the driver form (flags; hipErrorNotFound).
fn array_call(
    flags: Option<u32>,
    runtime: &'static str,
    driver: &'static str,
) -> (&'static str, HipError) {
    match flags {
        None => (runtime, HipError::INVALID_SYMBOL),
        Some(_) => (driver, HipError::NOT_FOUND),
    }
}

/// The checks an array binding starts with, and the resource it binds: `handle` of type
/// `res_type`, a channel descriptor that is given when `desc` is `Some`, and the driver
/// form's flags, which must be `HIP_TRSA_OVERRIDE_FORMAT`.
fn array_resource(
    device: &Device,
    texref: *const TextureReference,
    (res_type, handle): (u32, *const c_void),
    desc: Option<Option<&ChannelFormatDesc>>,
    flags: Option<u32>,
    call: &str,
) -> HipResult<ResourceDesc> {
    reference(device, texref, call)?;
    if handle.is_null() || desc == Some(None) {
        tracing::warn!("{call}: null array or channel descriptor");
        return Err(HipError::INVALID_VALUE);
    }
    if let Some(f) = flags.filter(|&f| f != OVERRIDE_FORMAT) {
        tracing::warn!(
            flags = f,
            "{call}: the flags must be HIP_TRSA_OVERRIDE_FORMAT"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(ResourceDesc {
        res_type,
        ptr: handle as *mut c_void,
        desc: ChannelFormatDesc::default(),
        width: 0,
        height: 0,
        pitch: 0,
    })
}

/// `hipBindTextureToArray` / `hipTexRefSetArray`: `desc` must describe the array's elements
/// when given (hipshim reads an array as what it holds).
pub fn bind_array(
    devices: &[Device],
    texref: *const TextureReference,
    handle: *const HipArray,
    desc: Option<Option<&ChannelFormatDesc>>,
    flags: Option<u32>,
) -> HipResult {
    let (call, missing) = array_call(flags, "hipBindTextureToArray", "hipTexRefSetArray");
    let device = current::device(devices)?;
    let target = (resource_type::ARRAY, handle as *const c_void);
    let resource = array_resource(device, texref, target, desc, flags, call)?;
    let (_, spec) = array::describe(handle)?;
    if let Some(Some(d)) = desc {
        if array::element_size(d)? != array::element_size(&spec.desc)? {
            tracing::warn!(?d, array = ?spec.desc, "{call}: the channel descriptor does not describe the array's elements");
            return Err(HipError::INVALID_VALUE);
        }
    }
    let texref = texref as *mut TextureReference;
    bind(devices, texref, resource, 0, missing, call)?;
    if flags.is_some() {
        // The format comes from the array.
        let r = reference(device, texref, call)?;
        let (format, channels) = array::format_of(&spec.desc);
        (r.format, r.num_channels) = (format, channels as i32);
    }
    Ok(())
}

/// `hipBindTextureToMipmappedArray` / `hipTexRefSetMipmappedArray`.
pub fn bind_mipmapped_array(
    devices: &[Device],
    texref: *const TextureReference,
    handle: *const HipMipmappedArray,
    desc: Option<Option<&ChannelFormatDesc>>,
    flags: Option<u32>,
) -> HipResult {
    let (call, missing) = array_call(
        flags,
        "hipBindTextureToMipmappedArray",
        "hipTexRefSetMipmappedArray",
    );
    let device = current::device(devices)?;
    let target = (resource_type::MIPMAPPED_ARRAY, handle as *const c_void);
    let resource = array_resource(device, texref, target, desc, flags, call)?;
    bind(
        devices,
        texref as *mut TextureReference,
        resource,
        0,
        missing,
        call,
    )
}

/// `hipUnbindTexture`: destroys the bound object (none is fine) and clears the field, on the
/// device copy too when there is one.
pub fn unbind(devices: &[Device], texref: *const TextureReference) -> HipResult {
    let call = "hipUnbindTexture";
    let device = current::device(devices)?;
    let r = reference(device, texref, call)?;
    let old = r.texture_object;
    if !old.is_null() {
        texture::destroy(devices, old, true)?;
    }
    r.texture_object = std::ptr::null_mut();
    if let Ok(address) = device_copy(device, texref as usize, HipError::INVALID_SYMBOL) {
        publish(devices, device, r, address)?;
    }
    Ok(())
}

/// The resource the reference is bound to (`hipErrorInvalidValue` when unbound).
pub fn bound_resource(
    device: &Device,
    texref: *const TextureReference,
    call: &str,
) -> HipResult<ResourceDesc> {
    let r = reference(device, texref, call)?;
    if r.texture_object.is_null() {
        tracing::warn!("{call}: the texture reference is not bound");
        return Err(HipError::INVALID_VALUE);
    }
    texture::texture_resource(device, r.texture_object)
}

/// `hipGetTextureAlignmentOffset`: the offset of the last bind.
pub fn alignment_offset(device: &Device, texref: *const TextureReference) -> HipResult<usize> {
    reference(device, texref, "hipGetTextureAlignmentOffset")?;
    Ok(EXTRA.lock().get(&(texref as usize)).map_or(0, |e| e.offset))
}

/// `hipTexRefSetBorderColor` / `hipTexRefGetBorderColor`.
pub fn set_border_color(
    device: &Device,
    texref: *mut TextureReference,
    colour: [f32; 4],
) -> HipResult {
    reference(device, texref, "hipTexRefSetBorderColor")?;
    EXTRA
        .lock()
        .entry(texref as usize)
        .or_default()
        .border_color = colour;
    Ok(())
}

pub fn border_color(device: &Device, texref: *const TextureReference) -> HipResult<[f32; 4]> {
    reference(device, texref, "hipTexRefGetBorderColor")?;
    Ok(EXTRA
        .lock()
        .get(&(texref as usize))
        .map_or([0.0; 4], |e| e.border_color))
}

/// `hipModuleGetTexRef`: the host copy for the texture variable `name` of `module` (the same
/// one on every call), in the driver API's defaults: read as normalized floats, point
/// filtering, clamped, unnormalized coordinates, format unset.
pub fn module_reference(
    device: &Device,
    module: &Arc<Module>,
    name: &str,
) -> HipResult<*mut TextureReference> {
    require_references(device, "hipModuleGetTexRef")?;
    if name.is_empty() {
        tracing::warn!("hipModuleGetTexRef: empty name");
        return Err(HipError::INVALID_VALUE);
    }
    let (_, bytes) = module::module_get_global(device, module, name)?;
    if bytes != REFERENCE_BYTES {
        tracing::warn!(
            name,
            bytes,
            "hipModuleGetTexRef: the variable is not a texture reference (not {REFERENCE_BYTES} bytes)"
        );
        return Err(HipError::NOT_FOUND);
    }
    let key = (Arc::as_ptr(module) as usize, name.to_owned());
    let mut copies = MODULE_COPIES.lock();
    if let Some(&texref) = copies.get(&key) {
        return Ok(texref as *mut TextureReference);
    }
    let fresh = Box::new(TextureReference {
        normalized: 0,
        read_mode: READ_NORMALIZED_FLOAT,
        filter_mode: 0,
        address_mode: [1; 3],
        channel_desc: ChannelFormatDesc {
            x: 32,
            y: 0,
            z: 0,
            w: 0,
            f: array::channel_kind::FLOAT,
        },
        srgb: 0,
        max_anisotropy: 0,
        mipmap_filter_mode: 0,
        mipmap_level_bias: 0.0,
        min_mipmap_level_clamp: 0.0,
        max_mipmap_level_clamp: 0.0,
        texture_object: std::ptr::null_mut(),
        num_channels: 0,
        format: 0,
    });
    // Lives until exit, as AMD's does: the program may hold it past the module.
    let texref = Box::into_raw(fresh) as usize;
    copies.insert(key, texref);
    MODULE_REFERENCES.lock().insert(
        texref,
        ModuleReference {
            module: Arc::downgrade(module),
            name: name.to_owned(),
        },
    );
    Ok(texref as *mut TextureReference)
}

/// `HIP_TRSF_*` of a reference's read mode, coordinates and sRGB.
pub fn flags(r: &TextureReference) -> u32 {
    use texture::drv_flags::*;
    let mut f = 0;
    if r.read_mode == READ_ELEMENT_TYPE {
        f |= READ_AS_INTEGER;
    }
    if r.normalized != 0 {
        f |= NORMALIZED_COORDINATES;
    }
    if r.srgb != 0 {
        f |= SRGB;
    }
    f
}

/// `hipTexRefSetFlags`: what the flags do not say is reset, as in AMD's runtime.
pub fn set_flags(r: &mut TextureReference, f: u32) -> HipResult {
    use texture::drv_flags::*;
    if f & !(READ_AS_INTEGER | NORMALIZED_COORDINATES | SRGB) != 0 {
        tracing::warn!(flags = f, "hipTexRefSetFlags: unknown HIP_TRSF_* flags");
        return Err(HipError::INVALID_VALUE);
    }
    r.read_mode = if f & READ_AS_INTEGER != 0 {
        READ_ELEMENT_TYPE
    } else {
        READ_NORMALIZED_FLOAT
    };
    r.normalized = i32::from(f & NORMALIZED_COORDINATES != 0);
    r.srgb = i32::from(f & SRGB != 0);
    Ok(())
}

/// A `hipTextureAddressMode` dimension (0..=2) and mode, checked.
pub fn check_address_mode(dim: i32, mode: Option<u32>, call: &str) -> HipResult<usize> {
    if !(0..=2).contains(&dim) {
        tracing::warn!(dim, "{call}: the dimension is 0, 1 or 2");
        return Err(HipError::INVALID_VALUE);
    }
    if let Some(m) = mode {
        if m > 3 {
            tracing::warn!(mode = m, "{call}: unknown hipTextureAddressMode");
            return Err(HipError::INVALID_VALUE);
        }
    }
    Ok(dim as usize)
}

/// A `hipTextureFilterMode`, checked.
pub fn check_filter_mode(mode: u32, call: &str) -> HipResult<u32> {
    if mode > 1 {
        tracing::warn!(mode, "{call}: unknown hipTextureFilterMode");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(mode)
}

/// `hipTexRefSetFormat`: a known `hipArray_Format` of 1, 2 or 4 channels.
pub fn set_format(r: &mut TextureReference, format: u32, channels: i32) -> HipResult {
    array::desc_of_format(format, channels.max(0) as u32)?;
    (r.format, r.num_channels) = (format, channels);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn texture_reference_layout_matches_rocm_5_and_6() {
        assert_eq!(REFERENCE_BYTES, 88);
        assert_eq!(offset_of!(TextureReference, address_mode), 12);
        assert_eq!(offset_of!(TextureReference, channel_desc), 24);
        assert_eq!(offset_of!(TextureReference, srgb), 44);
        assert_eq!(offset_of!(TextureReference, texture_object), 72);
        assert_eq!(offset_of!(TextureReference, num_channels), 80);
        assert_eq!(offset_of!(TextureReference, format), 84);
    }

    #[test]
    fn flags_round_trip_and_reset_what_they_omit() {
        let mut r = TextureReference {
            normalized: 1,
            read_mode: READ_ELEMENT_TYPE,
            filter_mode: 0,
            address_mode: [0; 3],
            channel_desc: ChannelFormatDesc::default(),
            srgb: 1,
            max_anisotropy: 0,
            mipmap_filter_mode: 0,
            mipmap_level_bias: 0.0,
            min_mipmap_level_clamp: 0.0,
            max_mipmap_level_clamp: 0.0,
            texture_object: std::ptr::null_mut(),
            num_channels: 0,
            format: 0,
        };
        set_flags(&mut r, texture::drv_flags::NORMALIZED_COORDINATES).unwrap();
        assert_eq!(
            (r.read_mode, r.normalized, r.srgb),
            (READ_NORMALIZED_FLOAT, 1, 0)
        );
        assert_eq!(flags(&r), texture::drv_flags::NORMALIZED_COORDINATES);
        assert_eq!(set_flags(&mut r, 0x100), Err(HipError::INVALID_VALUE));
        assert_eq!(
            check_address_mode(3, None, "t"),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(
            check_address_mode(2, Some(4), "t"),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(check_filter_mode(2, "t"), Err(HipError::INVALID_VALUE));
    }

    #[test]
    fn unknown_references_are_refused_unread() {
        assert!(!is_reference(0x40 as *const c_void));
    }
}
