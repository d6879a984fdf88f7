//! Texture and surface objects on devices with image instructions (gfx90a; gfx942 has none,
//! and every call here answers `hipErrorNotSupported` there).
//!
//! **The object.** A `hipTextureObject_t` / `hipSurfaceObject_t` is the device address of a
//! small block of device memory that hipshim owns; device code reads it with scalar loads
//! (AMD's `texture_fetch_functions.h` casts it to a constant-address-space pointer). Its
//! layout is what ROCm's headers and device library read:
//!
//! - dwords 0..8: the image resource (T#, GFX9 layout) over the resource's memory, or for a
//!   linear resource dwords 0..4: a buffer resource (V#) with one record per element;
//! - dword 8: the channel type as `hsa_ext_image_channel_type_t`, dword 9: the channel order
//!   as `hsa_ext_image_channel_order_t` (the `__ockl_image_channel_*` queries, which the
//!   surface functions use to turn a byte offset into a texel index);
//! - dword 10: the width in texels, or elements (ockl's gfx90a sampling workaround reads it);
//! - dwords 12..16 (`HIP_SAMPLER_OBJECT_OFFSET_DWORD`): the sampler (S#), texture objects
//!   only; the rest of the 20 dwords is zero.
//!
//! **Resources.** Arrays (1D, 2D, 3D, 1D and 2D layered) and single-level mipmapped arrays
//! are images over the array's linear memory (`array.rs`: rows padded to 256 bytes, which is
//! the T# pitch in texels); a pitch2D resource is the same over the caller's memory (base and
//! pitch 256-byte aligned, as `textureAlignment` and `texturePitchAlignment` say). A linear
//! resource is a buffer `tex1Dfetch` reads by index (`buffer_load_format_*` with `idxen`), up
//! to `maxTexture1DLinear` elements. Cubemaps and mipmapped arrays of several levels are
//! refused with `hipErrorNotSupported` and a log line: the simulated device models neither
//! cube images nor mip chains.
//!
//! **Descriptors.** The texture descriptor becomes the T#'s number format (the element type,
//! or UNORM/SNORM for 8- and 16-bit integers read as normalized floats) and the S#: address
//! modes (wrap and mirror become clamp under unnormalized coordinates, as CUDA documents),
//! point or linear filtering, normalized coordinates, and a border colour of transparent
//! black, opaque black or opaque white (the colours an S# names without a border colour
//! table). The descriptors passed in are kept and handed back by the getters as given.
//!
//! **Handles.** Live objects are kept in a table keyed by their device address; a value that
//! is not one (never was, or destroyed) is refused without being read.

use crate::error::{HipError, HipResult};
use crate::runtime::copy::{self, CopyKind};
use crate::runtime::devices::current;
use crate::runtime::devices::device::Device;
use crate::runtime::devices::device_props::MAX_LINEAR_ELEMENTS;
use crate::runtime::image::array::{self, channel_kind, ChannelFormatDesc, HipArray};
use crate::runtime::mem::memory;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;

/// `hipResourceType` / `HIPresourcetype`.
pub mod resource_type {
    pub const ARRAY: u32 = 0;
    pub const MIPMAPPED_ARRAY: u32 = 1;
    pub const LINEAR: u32 = 2;
    pub const PITCH_2D: u32 = 3;
}

/// `hipResourceDesc` (64 bytes), its union flattened: `ptr` is the array, the mipmapped
/// array or the device pointer; `desc`, `width` (or `sizeInBytes`), `height` and `pitch`
/// belong to the linear and pitch2D forms.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceDesc {
    pub res_type: u32,
    pub ptr: *mut c_void,
    pub desc: ChannelFormatDesc,
    pub width: usize,
    pub height: usize,
    pub pitch: usize,
}

/// `HIP_RESOURCE_DESC` (144 bytes), its union flattened as in [`ResourceDesc`], with the
/// driver API's format and channel count in place of a channel descriptor.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrvResourceDesc {
    pub res_type: u32,
    pub ptr: *mut c_void,
    pub format: u32,
    pub num_channels: u32,
    pub width: usize,
    pub height: usize,
    pub pitch: usize,
    pub reserved: [u32; 22],
    pub flags: u32,
}

/// `hipTextureDesc` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TextureDesc {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub read_mode: u32,
    pub srgb: i32,
    pub border_color: [f32; 4],
    pub normalized_coords: i32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
}

/// `HIP_TEXTURE_DESC` (104 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DrvTextureDesc {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub border_color: [f32; 4],
    pub reserved: [i32; 12],
}

/// `HIP_TRSF_*`: the driver texture descriptor's flags.
pub mod drv_flags {
    pub const READ_AS_INTEGER: u32 = 0x01;
    pub const NORMALIZED_COORDINATES: u32 = 0x02;
    pub const SRGB: u32 = 0x10;
}

/// `hipResourceViewDesc` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceViewDesc {
    pub format: u32,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub first_mipmap_level: u32,
    pub last_mipmap_level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
}

/// `HIP_RESOURCE_VIEW_DESC` (112 bytes): the runtime form and 16 reserved words.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrvResourceViewDesc {
    pub view: ResourceViewDesc,
    pub reserved: [u32; 16],
}

/// `hipTextureAddressMode`.
mod address_mode {
    pub const WRAP: u32 = 0;
    pub const CLAMP: u32 = 1;
    pub const MIRROR: u32 = 2;
    pub const BORDER: u32 = 3;
}

const FILTER_POINT: u32 = 0;
const FILTER_LINEAR: u32 = 1;
const READ_ELEMENT_TYPE: u32 = 0;
const READ_NORMALIZED_FLOAT: u32 = 1;

/// Dwords of the object: the image (12) then the sampler (8), as ROCm's `texture_types.h`
/// sizes them.
const IMAGE_DWORDS: usize = 12;
const OBJECT_DWORDS: usize = IMAGE_DWORDS + 8;

/// Bytes a T# base address and a pitch2D row pitch must be aligned to.
const ALIGNMENT: usize = crate::runtime::devices::device_props::TEXTURE_ALIGNMENT;

/// What a live object was made from, for the getters.
#[derive(Clone, Copy, Debug)]
struct Object {
    resource: ResourceDesc,
    /// `None` for surfaces.
    texture: Option<TextureDesc>,
    view: Option<ResourceViewDesc>,
}

// SAFETY: the raw pointers in the descriptors are handles and device addresses, kept only to
// be handed back.
unsafe impl Send for Object {}

static OBJECTS: std::sync::LazyLock<Mutex<HashMap<usize, Object>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));

/// `hipErrorNotSupported` unless `device` (the current device) has image instructions.
pub fn require_images(device: &Device, call: &str) -> HipResult {
    if device.info.image_support {
        Ok(())
    } else {
        tracing::warn!(
            device = %device.info.gcn_arch_name,
            "{call}: the device has no image instructions (no textures or surfaces)"
        );
        Err(HipError::NOT_SUPPORTED)
    }
}

// ---------------------------------------------------------------------------------------
// Formats

/// T# `NUM_FORMAT` values.
mod num_format {
    pub const UNORM: u32 = 0;
    pub const SNORM: u32 = 1;
    pub const UINT: u32 = 4;
    pub const SINT: u32 = 5;
    pub const FLOAT: u32 = 7;
}

/// `hsa_ext_image_channel_type_t` for (number format, bits).
fn hsa_channel_type(num: u32, bits: i32) -> u32 {
    use num_format::*;
    match (num, bits) {
        (SNORM, 8) => 0,
        (SNORM, _) => 1,
        (UNORM, 8) => 2,
        (UNORM, _) => 3,
        (SINT, 8) => 8,
        (SINT, 16) => 9,
        (SINT, _) => 10,
        (UINT, 8) => 11,
        (UINT, 16) => 12,
        (UINT, _) => 13,
        (_, 16) => 14,
        _ => 15,
    }
}

/// The format parts a T# and a V# share: GFX9 `DATA_FORMAT` of a channel descriptor and the
/// DST_SEL swizzle (missing channels read 0, and alpha 1: DST_SEL 4..7 pick X..W, 0 is zero,
/// 1 is one), packed as dword 3 of either descriptor holds it (bits 11..0).
fn data_format_and_swizzle(desc: &ChannelFormatDesc) -> HipResult<(u32, u32)> {
    let channels = channel_count(desc);
    // 8, 16, 8_8, 32, 16_16, 8_8_8_8, 32_32, 16_16_16_16, 32_32_32_32.
    let data_format = match (channels, desc.x) {
        (1, 8) => 1,
        (1, 16) => 2,
        (2, 8) => 3,
        (1, 32) => 4,
        (2, 16) => 5,
        (4, 8) => 10,
        (2, 32) => 11,
        (4, 16) => 12,
        (4, 32) => 14,
        _ => {
            tracing::warn!(?desc, "no image format for this channel descriptor");
            return Err(HipError::INVALID_VALUE);
        }
    };
    let sel = |k: u32| {
        if k < channels {
            4 + k
        } else if k == 3 {
            1
        } else {
            0
        }
    };
    Ok((
        data_format,
        sel(0) | (sel(1) << 3) | (sel(2) << 6) | (sel(3) << 9),
    ))
}

fn channel_count(desc: &ChannelFormatDesc) -> u32 {
    [desc.x, desc.y, desc.z, desc.w]
        .iter()
        .filter(|&&b| b != 0)
        .count() as u32
}

/// Dwords 8..11 of the object: the HSA channel type and order the ockl queries read, and
/// the width (ockl's gfx90a sampling workaround reads it).
fn channel_words(desc: &ChannelFormatDesc, num: u32, width: usize) -> [u32; 3] {
    // hsa_ext_image_channel_order_t: R 1, RG 3, RGBA 8.
    let order = match channel_count(desc) {
        1 => 1,
        2 => 3,
        _ => 8,
    };
    [hsa_channel_type(num, desc.x), order, width as u32]
}

/// How an image's texels are laid out and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ImageDesc {
    base: usize,
    /// T# `TYPE`: 8 1D, 9 2D, 10 3D, 12 1D array, 13 2D array.
    kind: u32,
    width: usize,
    height: usize,
    /// Depth, or layers of an array (1 otherwise).
    depth: usize,
    pitch_bytes: usize,
    desc: ChannelFormatDesc,
    /// `NUM_FORMAT`.
    num: u32,
}

impl ImageDesc {
    /// The 12 image dwords of the object.
    fn words(&self) -> HipResult<[u32; IMAGE_DWORDS]> {
        let (data_format, swizzle) = data_format_and_swizzle(&self.desc)?;
        let element = (channel_count(&self.desc) * self.desc.x as u32 / 8) as usize;
        let pitch = self.pitch_bytes / element;
        let fits = |v: usize, bits: u32| v >= 1 && v <= 1 << bits;
        if !(fits(self.width, 14)
            && fits(self.height, 14)
            && fits(self.depth, 13)
            && fits(pitch, 16))
        {
            tracing::warn!(image = ?self, "image larger than a T# describes");
            return Err(HipError::INVALID_VALUE);
        }
        if !self.base.is_multiple_of(ALIGNMENT) {
            // Device pools hand out whole pages, so an array's memory is always aligned.
            tracing::warn!(image = ?self, "an image's base address must be 256-byte aligned");
            return Err(HipError::INVALID_VALUE);
        }
        let (base, base_hi) = ((self.base >> 8) as u32, ((self.base >> 40) & 0xff) as u32);
        let mut w = [0u32; IMAGE_DWORDS];
        w[0] = base;
        w[1] = base_hi | (data_format << 20) | (self.num << 26);
        w[2] = (self.width as u32 - 1) | ((self.height as u32 - 1) << 14);
        w[3] = swizzle | (self.kind << 28);
        w[4] = (self.depth as u32 - 1) | ((pitch as u32 - 1) << 13);
        w[8..11].copy_from_slice(&channel_words(&self.desc, self.num, self.width));
        Ok(w)
    }
}

/// The number format a channel descriptor is read as.
fn num_format_of(desc: &ChannelFormatDesc, normalized_float: bool) -> u32 {
    use num_format::*;
    match desc.f {
        channel_kind::FLOAT => FLOAT,
        // 32-bit integers have no normalized form; they are read as integers.
        channel_kind::SIGNED if normalized_float && desc.x < 32 => SNORM,
        channel_kind::UNSIGNED if normalized_float && desc.x < 32 => UNORM,
        channel_kind::SIGNED => SINT,
        _ => UINT,
    }
}

/// The image over an array's memory (`array.rs` layout).
fn image_of_array(handle: *const HipArray, normalized_float: bool) -> HipResult<ImageDesc> {
    let (g, spec) = array::describe(handle)?;
    let flags = g.flags;
    if flags & array::array_flags::CUBEMAP != 0 {
        tracing::warn!("cubemap textures are not supported (the device model has no cube images)");
        return Err(HipError::NOT_SUPPORTED);
    }
    let layered = flags & array::array_flags::LAYERED != 0;
    let e = spec.extent;
    let (kind, height, depth) = match (layered, e.height, e.depth) {
        (true, 0, d) => (12, 1, d),
        (true, h, d) => (13, h, d),
        (false, 0, _) => (8, 1, 1),
        (false, h, 0) => (9, h, 1),
        (false, h, d) => (10, h, d),
    };
    Ok(ImageDesc {
        base: g.data,
        kind,
        width: e.width,
        height,
        depth,
        pitch_bytes: g.pitch,
        desc: spec.desc,
        num: num_format_of(&spec.desc, normalized_float),
    })
}

/// The image a resource descriptor names.
fn image_of(resource: &ResourceDesc, normalized_float: bool) -> HipResult<ImageDesc> {
    match resource.res_type {
        resource_type::ARRAY => image_of_array(resource.ptr as *const HipArray, normalized_float),
        resource_type::MIPMAPPED_ARRAY => {
            let mipmap = resource.ptr as *const array::HipMipmappedArray;
            let levels = array::mipmapped_levels(mipmap)?;
            if levels != 1 {
                tracing::warn!(
                    levels,
                    "textures of mipmapped arrays with more than one level are not supported (the device model samples level 0 only)"
                );
                return Err(HipError::NOT_SUPPORTED);
            }
            image_of_array(array::mipmapped_level(mipmap, 0)?, normalized_float)
        }
        resource_type::PITCH_2D => {
            let elem = array::element_size(&resource.desc)?;
            let (base, width, height, pitch) = (
                resource.ptr as usize,
                resource.width,
                resource.height,
                resource.pitch,
            );
            let bad = |why: &str| {
                tracing::warn!(?resource, "pitch2D resource: {why}");
                Err(HipError::INVALID_VALUE)
            };
            if base == 0 || width == 0 || height == 0 {
                return bad("null pointer or empty extent");
            }
            if base % ALIGNMENT != 0 || pitch % ALIGNMENT != 0 {
                return bad("pointer and pitch must be multiples of the texture alignment (256)");
            }
            if width.checked_mul(elem).is_none_or(|row| row > pitch) {
                return bad("a row is wider than the pitch");
            }
            let bytes = pitch
                .checked_mul(height - 1)
                .and_then(|b| b.checked_add(width * elem));
            if bytes.is_none_or(|b| memory::lookup(base, b).is_none()) {
                return bad("the rows do not lie in one device allocation");
            }
            Ok(ImageDesc {
                base,
                kind: 9,
                width,
                height,
                depth: 1,
                pitch_bytes: pitch,
                desc: resource.desc,
                num: num_format_of(&resource.desc, normalized_float),
            })
        }
        resource_type::LINEAR => {
            tracing::warn!("a linear resource is a buffer, not an image");
            Err(HipError::INVALID_VALUE)
        }
        other => {
            tracing::warn!(res_type = other, "unknown hipResourceType");
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// The object's first 12 dwords for a linear resource (`tex1Dfetch`, which becomes
/// `buffer_load_format_*` with `idxen`): a V# of one record per element, then the channel
/// words as for images.
fn linear_words(resource: &ResourceDesc, normalized_float: bool) -> HipResult<[u32; 12]> {
    let elem = array::element_size(&resource.desc)?;
    let (base, bytes) = (resource.ptr as usize, resource.width);
    let elements = bytes / elem;
    let bad = |why: &str| {
        tracing::warn!(?resource, "linear resource: {why}");
        Err(HipError::INVALID_VALUE)
    };
    if base == 0 || elements == 0 {
        return bad("null pointer or fewer bytes than one element");
    }
    if elements > MAX_LINEAR_ELEMENTS {
        return bad("more elements than maxTexture1DLinear");
    }
    if memory::lookup(base, bytes).is_none() {
        return bad("the bytes do not lie in one device allocation");
    }
    let (data_format, swizzle) = data_format_and_swizzle(&resource.desc)?;
    let num = num_format_of(&resource.desc, normalized_float);
    let mut w = [0u32; IMAGE_DWORDS];
    w[0] = base as u32;
    w[1] = ((base >> 32) & 0xffff) as u32 | ((elem as u32) << 16);
    w[2] = elements as u32;
    // GFX9 V# dword 3: DST_SEL, NUM_FORMAT (14..12), DATA_FORMAT (18..15).
    w[3] = swizzle | (num << 12) | (data_format << 15);
    w[8..11].copy_from_slice(&channel_words(&resource.desc, num, elements));
    Ok(w)
}

/// The 4 S# dwords of a texture descriptor.
fn sampler_words(t: &TextureDesc) -> HipResult<[u32; 4]> {
    use address_mode::*;
    let normalized = t.normalized_coords != 0;
    let mut uses_border = false;
    let mut clamp = [0u32; 3];
    for (k, &mode) in t.address_mode.iter().enumerate() {
        clamp[k] = match mode {
            WRAP | MIRROR if !normalized => 2,
            WRAP => 0,
            MIRROR => 1,
            CLAMP => 2,
            BORDER => {
                uses_border = true;
                6
            }
            _ => {
                tracing::warn!(mode, "unknown hipTextureAddressMode");
                return Err(HipError::INVALID_VALUE);
            }
        };
    }
    let filter = match t.filter_mode {
        FILTER_POINT => 0,
        FILTER_LINEAR => 1,
        other => {
            tracing::warn!(filter = other, "unknown hipTextureFilterMode");
            return Err(HipError::INVALID_VALUE);
        }
    };
    let border = match t.border_color {
        _ if !uses_border => 0,
        [0.0, 0.0, 0.0, 0.0] => 0,
        [0.0, 0.0, 0.0, 1.0] => 1,
        [1.0, 1.0, 1.0, 1.0] => 2,
        colour => {
            tracing::warn!(
                ?colour,
                "border colours other than transparent black, opaque black and opaque white are not supported"
            );
            return Err(HipError::NOT_SUPPORTED);
        }
    };
    if t.max_anisotropy > 1 {
        tracing::debug!(
            max_anisotropy = t.max_anisotropy,
            "anisotropic filtering is not modelled; filtering as asked without it"
        );
    }
    let s0 = clamp[0] | (clamp[1] << 3) | (clamp[2] << 6) | (u32::from(!normalized) << 15);
    // XY_MAG_FILTER, XY_MIN_FILTER, Z_FILTER (1 point, 2 linear).
    let s2 = (filter << 20) | (filter << 22) | ((filter + 1) << 24);
    Ok([s0, 0, s2, border << 30])
}

// ---------------------------------------------------------------------------------------
// Objects

/// Writes `words` to new memory of `device` (one of `devices`) and records it; returns its
/// address.
fn publish(
    devices: &[Device],
    device: &Device,
    words: &[u32; OBJECT_DWORDS],
    object: Object,
) -> HipResult<*mut c_void> {
    let bytes = std::mem::size_of_val(words);
    let ptr = memory::malloc(device, bytes)?;
    let request = copy::CopyRequest::linear(
        ptr,
        words.as_ptr() as *const c_void,
        bytes,
        CopyKind::HostToDevice,
    );
    let copy_devices = copy::Devices {
        all: devices,
        current: Ok(device),
    };
    // SAFETY: `ptr` is a new device allocation of `bytes`; `words` is that many host bytes.
    let copied = unsafe { copy::memcpy(copy_devices, request) };
    if let Err(e) = copied {
        // SAFETY: allocated above, freed once.
        let _ = unsafe { memory::free(devices, ptr) };
        return Err(e);
    }
    OBJECTS.lock().insert(ptr as usize, object);
    tracing::debug!(
        object = format_args!("{ptr:p}"),
        image = format_args!("{:08x?}", &words[..IMAGE_DWORDS]),
        sampler = format_args!("{:08x?}", &words[IMAGE_DWORDS..IMAGE_DWORDS + 4]),
        "texture/surface object created"
    );
    Ok(ptr)
}

/// `hipCreateTextureObject`, on the current one of `devices`.
pub fn create_texture(
    devices: &[Device],
    resource: &ResourceDesc,
    texture: &TextureDesc,
    view: Option<&ResourceViewDesc>,
) -> HipResult<*mut c_void> {
    let device = current::device(devices)?;
    require_images(device, "hipCreateTextureObject")?;
    let normalized_float = match texture.read_mode {
        READ_ELEMENT_TYPE => false,
        READ_NORMALIZED_FLOAT => true,
        other => {
            tracing::warn!(read_mode = other, "unknown hipTextureReadMode");
            return Err(HipError::INVALID_VALUE);
        }
    };
    if texture.srgb != 0 {
        tracing::warn!("sRGB textures are not supported");
        return Err(HipError::NOT_SUPPORTED);
    }
    let (image_words, integer, extent) = if resource.res_type == resource_type::LINEAR {
        // Fetches by index: filtering and addressing do not apply.
        let words = linear_words(resource, normalized_float)?;
        (words, false, [words[2] as usize, 1, 1])
    } else {
        let image = image_of(resource, normalized_float)?;
        let integer = matches!(image.num, num_format::UINT | num_format::SINT);
        let extent = [image.width, image.height, image.depth];
        (image.words()?, integer, extent)
    };
    if let Some(v) = view {
        check_view(v, extent)?;
    }
    let sampler = sampler_words(texture)?;
    if integer && texture.filter_mode == FILTER_LINEAR {
        tracing::warn!("linear filtering needs a texture read as floats (a float format, or 8/16-bit integers read as normalized floats)");
        return Err(HipError::INVALID_VALUE);
    }
    let mut words = [0u32; OBJECT_DWORDS];
    words[..IMAGE_DWORDS].copy_from_slice(&image_words);
    words[IMAGE_DWORDS..IMAGE_DWORDS + 4].copy_from_slice(&sampler);
    publish(
        devices,
        device,
        &words,
        Object {
            resource: *resource,
            texture: Some(*texture),
            view: view.copied(),
        },
    )
}

/// A resource view must show the whole resource as it is: its own format, mip levels,
/// layers or a smaller extent would need descriptors hipshim does not make. A zero size
/// means the resource's own.
fn check_view(v: &ResourceViewDesc, extent: [usize; 3]) -> HipResult {
    let size_ok = |asked: usize, have: usize| asked == 0 || asked == have;
    let whole = v.format == 0
        && v.first_mipmap_level == 0
        && v.last_mipmap_level == 0
        && v.first_layer == 0
        && size_ok(v.width, extent[0])
        && size_ok(v.height, extent[1])
        && size_ok(v.depth, extent[2]);
    if whole {
        Ok(())
    } else {
        tracing::warn!(view = ?v, ?extent, "resource views other than the whole resource in its own format are not supported");
        Err(HipError::NOT_SUPPORTED)
    }
}

/// `hipCreateSurfaceObject`: an array resource, read and written as its element type.
pub fn create_surface(devices: &[Device], resource: &ResourceDesc) -> HipResult<*mut c_void> {
    let device = current::device(devices)?;
    require_images(device, "hipCreateSurfaceObject")?;
    if resource.res_type != resource_type::ARRAY {
        tracing::warn!(
            res_type = resource.res_type,
            "a surface object's resource is an array"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let image = image_of(resource, false)?;
    let mut words = [0u32; OBJECT_DWORDS];
    words[..IMAGE_DWORDS].copy_from_slice(&image.words()?);
    publish(
        devices,
        device,
        &words,
        Object {
            resource: *resource,
            texture: None,
            view: None,
        },
    )
}

/// The live object at `handle`, of the kind asked for (texture or surface); `remove` takes
/// it out of the table in the same look.
fn find(handle: *mut c_void, texture: bool, remove: bool) -> HipResult<Object> {
    let mut objects = OBJECTS.lock();
    match objects.get(&(handle as usize)) {
        Some(o) if o.texture.is_some() == texture => {
            let found = *o;
            if remove {
                objects.remove(&(handle as usize));
            }
            Ok(found)
        }
        _ => {
            let kind = if texture { "texture" } else { "surface" };
            tracing::warn!(
                handle = format_args!("{handle:p}"),
                "not a live {kind} object"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

fn lookup(handle: *mut c_void, texture: bool) -> HipResult<Object> {
    find(handle, texture, false)
}

/// `hipDestroyTextureObject` / `hipDestroySurfaceObject`: after the work of `devices`, as
/// `hipFree` lets memory go. Null is a no-op, as in AMD's runtime.
pub fn destroy(devices: &[Device], handle: *mut c_void, texture: bool) -> HipResult {
    require_images(
        current::device(devices)?,
        if texture {
            "hipDestroyTextureObject"
        } else {
            "hipDestroySurfaceObject"
        },
    )?;
    if handle.is_null() {
        return Ok(());
    }
    find(handle, texture, true)?;
    let address = handle as usize;
    // SAFETY: a live object's address is memory `publish` had from `memory::malloc`; it is
    // freed once (its entry is gone).
    unsafe { memory::free(devices, address as *mut c_void) }
}

/// `hipGetTextureObjectResourceDesc`; `device` is the current device.
pub fn texture_resource(device: &Device, handle: *mut c_void) -> HipResult<ResourceDesc> {
    require_images(device, "hipGetTextureObjectResourceDesc")?;
    Ok(lookup(handle, true)?.resource)
}

/// `hipGetTextureObjectTextureDesc`; `device` is the current device.
pub fn texture_desc(device: &Device, handle: *mut c_void) -> HipResult<TextureDesc> {
    require_images(device, "hipGetTextureObjectTextureDesc")?;
    Ok(lookup(handle, true)?
        .texture
        .expect("a texture object has a texture descriptor"))
}

/// `hipGetTextureObjectResourceViewDesc`: the view given at creation; an object made without
/// one has none (`hipErrorInvalidValue`); `device` is the current device.
pub fn texture_view(device: &Device, handle: *mut c_void) -> HipResult<ResourceViewDesc> {
    require_images(device, "hipGetTextureObjectResourceViewDesc")?;
    lookup(handle, true)?.view.ok_or_else(|| {
        tracing::warn!("the texture object was created without a resource view");
        HipError::INVALID_VALUE
    })
}

// ---------------------------------------------------------------------------------------
// The driver API's forms

impl ResourceDesc {
    pub fn from_driver(d: &DrvResourceDesc) -> HipResult<ResourceDesc> {
        if d.flags != 0 {
            tracing::warn!(flags = d.flags, "HIP_RESOURCE_DESC flags must be zero");
            return Err(HipError::INVALID_VALUE);
        }
        let mut r = ResourceDesc {
            res_type: d.res_type,
            ptr: d.ptr,
            desc: ChannelFormatDesc::default(),
            width: 0,
            height: 0,
            pitch: 0,
        };
        if matches!(d.res_type, resource_type::LINEAR | resource_type::PITCH_2D) {
            r.desc = array::desc_of_format(d.format, d.num_channels)?;
            (r.width, r.height, r.pitch) = (d.width, d.height, d.pitch);
        }
        Ok(r)
    }

    pub fn to_driver(&self) -> DrvResourceDesc {
        let mut d = DrvResourceDesc {
            res_type: self.res_type,
            ptr: self.ptr,
            format: 0,
            num_channels: 0,
            width: 0,
            height: 0,
            pitch: 0,
            reserved: [0; 22],
            flags: 0,
        };
        if matches!(
            self.res_type,
            resource_type::LINEAR | resource_type::PITCH_2D
        ) {
            (d.format, d.num_channels) = array::format_of(&self.desc);
            (d.width, d.height, d.pitch) = (self.width, self.height, self.pitch);
        }
        d
    }
}

impl TextureDesc {
    /// The driver descriptor's meaning: integers are read as normalized floats unless
    /// `HIP_TRSF_READ_AS_INTEGER` says otherwise.
    pub fn from_driver(d: &DrvTextureDesc) -> TextureDesc {
        use drv_flags::*;
        TextureDesc {
            address_mode: d.address_mode,
            filter_mode: d.filter_mode,
            read_mode: if d.flags & READ_AS_INTEGER != 0 {
                READ_ELEMENT_TYPE
            } else {
                READ_NORMALIZED_FLOAT
            },
            srgb: i32::from(d.flags & SRGB != 0),
            border_color: d.border_color,
            normalized_coords: i32::from(d.flags & NORMALIZED_COORDINATES != 0),
            max_anisotropy: d.max_anisotropy,
            mipmap_filter_mode: d.mipmap_filter_mode,
            mipmap_level_bias: d.mipmap_level_bias,
            min_mipmap_level_clamp: d.min_mipmap_level_clamp,
            max_mipmap_level_clamp: d.max_mipmap_level_clamp,
        }
    }

    pub fn to_driver(&self) -> DrvTextureDesc {
        use drv_flags::*;
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        DrvTextureDesc {
            address_mode: self.address_mode,
            filter_mode: self.filter_mode,
            flags: flag(self.read_mode == READ_ELEMENT_TYPE, READ_AS_INTEGER)
                | flag(self.normalized_coords != 0, NORMALIZED_COORDINATES)
                | flag(self.srgb != 0, SRGB),
            max_anisotropy: self.max_anisotropy,
            mipmap_filter_mode: self.mipmap_filter_mode,
            mipmap_level_bias: self.mipmap_level_bias,
            min_mipmap_level_clamp: self.min_mipmap_level_clamp,
            max_mipmap_level_clamp: self.max_mipmap_level_clamp,
            border_color: self.border_color,
            reserved: [0; 12],
        }
    }
}

/// The driver's view descriptor: the runtime's (the two number their formats alike) and
/// reserved words.
impl DrvResourceViewDesc {
    pub fn from_view(view: ResourceViewDesc) -> DrvResourceViewDesc {
        DrvResourceViewDesc {
            view,
            reserved: [0; 16],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::image::array::array_format;

    #[test]
    fn descriptor_layouts_match_rocm_5_2() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<ResourceDesc>(), 64);
        assert_eq!(offset_of!(ResourceDesc, ptr), 8);
        assert_eq!(offset_of!(ResourceDesc, desc), 16);
        assert_eq!(offset_of!(ResourceDesc, width), 40);
        assert_eq!(offset_of!(ResourceDesc, pitch), 56);
        assert_eq!(size_of::<DrvResourceDesc>(), 144);
        assert_eq!(offset_of!(DrvResourceDesc, format), 16);
        assert_eq!(offset_of!(DrvResourceDesc, width), 24);
        assert_eq!(offset_of!(DrvResourceDesc, flags), 136);
        assert_eq!(size_of::<TextureDesc>(), 64);
        assert_eq!(offset_of!(TextureDesc, border_color), 24);
        assert_eq!(offset_of!(TextureDesc, normalized_coords), 40);
        assert_eq!(size_of::<DrvTextureDesc>(), 104);
        assert_eq!(offset_of!(DrvTextureDesc, border_color), 40);
        assert_eq!(size_of::<ResourceViewDesc>(), 48);
        assert_eq!(size_of::<DrvResourceViewDesc>(), 112);
    }

    fn image(desc: ChannelFormatDesc, num: u32) -> ImageDesc {
        ImageDesc {
            base: 0xab12_3456_7800,
            kind: 9,
            width: 100,
            height: 7,
            depth: 1,
            pitch_bytes: 512,
            desc,
            num,
        }
    }

    #[test]
    fn image_words_hold_the_fields_hsasim_and_ockl_read() {
        let float2 = ChannelFormatDesc {
            x: 32,
            y: 32,
            z: 0,
            w: 0,
            f: channel_kind::FLOAT,
        };
        let w = image(float2, num_format::FLOAT).words().unwrap();
        assert_eq!(w[0], 0x1234_5678);
        assert_eq!(w[1], 0xab | (11 << 20) | (7 << 26));
        assert_eq!(w[2], 99 | (6 << 14));
        // X, Y, 0, 1; 2D.
        assert_eq!(w[3], 4 | (5 << 3) | (1 << 9) | (9 << 28));
        // Pitch 512 bytes of 8-byte texels.
        assert_eq!(w[4] >> 13, 63);
        assert_eq!((w[8], w[9], w[10]), (15, 3, 100));
        let uchar4 = ChannelFormatDesc {
            x: 8,
            y: 8,
            z: 8,
            w: 8,
            f: channel_kind::UNSIGNED,
        };
        let num = num_format_of(&uchar4, true);
        assert_eq!(num, num_format::UNORM);
        let w = image(uchar4, num).words().unwrap();
        assert_eq!((w[1] >> 20) & 63, 10);
        assert_eq!((w[8], w[9]), (2, 8));
        let int1 = ChannelFormatDesc {
            x: 32,
            y: 0,
            z: 0,
            w: 0,
            f: channel_kind::SIGNED,
        };
        assert_eq!(num_format_of(&int1, true), num_format::SINT);
    }

    #[test]
    fn samplers_map_address_modes_filters_and_borders() {
        let mut t = TextureDesc {
            address_mode: [
                address_mode::WRAP,
                address_mode::MIRROR,
                address_mode::BORDER,
            ],
            filter_mode: FILTER_LINEAR,
            normalized_coords: 1,
            border_color: [1.0; 4],
            ..TextureDesc::default()
        };
        let s = sampler_words(&t).unwrap();
        assert_eq!(s[0], 1 << 3 | 6 << 6);
        assert_eq!(s[2], 1 << 20 | 1 << 22 | 2 << 24);
        assert_eq!(s[3], 2 << 30);
        // Unnormalized: wrap and mirror clamp, and the S# says so.
        t.normalized_coords = 0;
        let s = sampler_words(&t).unwrap();
        assert_eq!(s[0], 2 | 2 << 3 | 6 << 6 | 1 << 15);
        t.border_color = [0.5, 0.0, 0.0, 1.0];
        assert_eq!(sampler_words(&t), Err(HipError::NOT_SUPPORTED));
        t.address_mode = [address_mode::CLAMP; 3];
        assert!(sampler_words(&t).is_ok());
        t.filter_mode = 7;
        assert_eq!(sampler_words(&t), Err(HipError::INVALID_VALUE));
    }

    #[test]
    fn driver_descriptors_round_trip() {
        let d = DrvTextureDesc {
            address_mode: [1, 2, 3],
            filter_mode: 1,
            flags: drv_flags::READ_AS_INTEGER | drv_flags::NORMALIZED_COORDINATES,
            border_color: [0.0, 0.0, 0.0, 1.0],
            ..DrvTextureDesc::default()
        };
        let t = TextureDesc::from_driver(&d);
        assert_eq!((t.read_mode, t.normalized_coords), (READ_ELEMENT_TYPE, 1));
        assert_eq!(t.to_driver(), d);
        let r = DrvResourceDesc {
            res_type: resource_type::PITCH_2D,
            ptr: 0x1000 as *mut c_void,
            format: array_format::HALF,
            num_channels: 2,
            width: 5,
            height: 6,
            pitch: 256,
            reserved: [0; 22],
            flags: 0,
        };
        assert_eq!(ResourceDesc::from_driver(&r).unwrap().to_driver(), r);
    }

    #[test]
    fn handles_that_were_never_objects_are_refused_unread() {
        assert_eq!(
            lookup(0x40 as *mut c_void, true).err(),
            Some(HipError::INVALID_VALUE)
        );
    }
}
