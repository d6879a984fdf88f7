//! HIP arrays (`hipArray_t`) and mipmapped arrays (`hipMipmappedArray_t`) on a device without
//! image instructions: an array is linear device memory with a known layout, and copies to and
//! from it are pitched copies (`copy3d.rs`).
//!
//! **Layout.** Element `(x, y, z)` of an array lies at `data + z * pitch * rows + y * pitch +
//! x * element`, where `element` is the channel descriptor's size in bytes, `pitch` is the row
//! (`width * element`) rounded up to [`memory::PITCH_ALIGNMENT`] (the texture pitch alignment
//! the device reports, 256 bytes), `rows` is the height (1 for a 1D array) and the slices are
//! the depth, or the layers of a layered array (1 for 1D and 2D arrays). A kernel can read an
//! array's memory at `data` with that rule.
//!
//! **Handles.** In ROCm 5's ABI `hipArray_t` points to a public `struct hipArray` (data, desc,
//! type, width, height, depth, Format, NumChannels, isDrv, textureType) whose fields programs
//! may read, so the handle is a real struct in that layout ([`HipArray`]), with hipshim's own
//! fields after it. ROCm 6 made the struct opaque (its header only declares it); the prefix
//! costs nothing there. A handle coming back from the program is looked up in the table of
//! live arrays before anything reads it: a pointer that never was an array, or a freed one, is
//! rejected without being dereferenced. Mipmapped arrays ([`HipMipmappedArray`], ROCm 5's
//! public layout, plus ROCm 6's `num_channels`) work the same way; each level is an array of
//! its own, freed with its owner.
//!
//! **Textures and surfaces.** On a device with image instructions (gfx90a) texture and
//! surface objects read and write an array in place: this layout, with its 256-byte row
//! pitch and a 256-byte-aligned base, is one an image descriptor (T#) describes
//! (`texture.rs`). On one without them (gfx942) arrays are memory for copies and kernels'
//! own loads only, and the flags that ask for textures or surfaces only change what the
//! descriptor calls return.

use crate::error::{HipError, HipResult};
use crate::runtime::base::compat;
use crate::runtime::devices::current;
use crate::runtime::devices::device::Device;
use crate::runtime::mem::memory;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;

/// `hipChannelFormatDesc` (the same in ROCm 5, 6 and 7): bits per channel and their kind.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelFormatDesc {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub w: i32,
    /// `hipChannelFormatKind`: Signed 0, Unsigned 1, Float 2, None 3.
    pub f: u32,
}

pub mod channel_kind {
    pub const SIGNED: u32 = 0;
    pub const UNSIGNED: u32 = 1;
    pub const FLOAT: u32 = 2;
}

/// `hipArray_Format` (driver API).
pub mod array_format {
    pub const UNSIGNED_INT8: u32 = 0x01;
    pub const UNSIGNED_INT16: u32 = 0x02;
    pub const UNSIGNED_INT32: u32 = 0x03;
    pub const SIGNED_INT8: u32 = 0x08;
    pub const SIGNED_INT16: u32 = 0x09;
    pub const SIGNED_INT32: u32 = 0x0a;
    pub const HALF: u32 = 0x10;
    pub const FLOAT: u32 = 0x20;
}

/// `hipArrayDefault` .. `hipArrayTextureGather`.
pub mod array_flags {
    pub const LAYERED: u32 = 0x01;
    pub const SURFACE_LOAD_STORE: u32 = 0x02;
    pub const CUBEMAP: u32 = 0x04;
    pub const TEXTURE_GATHER: u32 = 0x08;
    pub const ALL: u32 = LAYERED | SURFACE_LOAD_STORE | CUBEMAP | TEXTURE_GATHER;
}

/// `hipExtent`: width (elements for arrays, bytes for linear memory), height, depth.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `hipPos`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `hipPitchedPtr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `HIP_ARRAY_DESCRIPTOR`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrayDescriptor {
    pub width: usize,
    pub height: usize,
    pub format: u32,
    pub num_channels: u32,
}

/// `HIP_ARRAY3D_DESCRIPTOR`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Array3DDescriptor {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub format: u32,
    pub num_channels: u32,
    pub flags: u32,
}

/// `hipTextureType*`: what `textureType` of a [`HipArray`] says.
mod texture_type {
    pub const T1D: u32 = 0x01;
    pub const T2D: u32 = 0x02;
    pub const T3D: u32 = 0x03;
    pub const CUBEMAP: u32 = 0x0c;
    pub const T1D_LAYERED: u32 = 0xf1;
    pub const T2D_LAYERED: u32 = 0xf2;
    pub const CUBEMAP_LAYERED: u32 = 0xfc;
}

/// `struct hipArray` as ROCm 5.2's `driver_types.h` publishes it (64 bytes, checked by a test
/// against the installed header), then hipshim's geometry.
#[repr(C)]
#[derive(Debug)]
pub struct HipArray {
    pub data: *mut c_void,
    pub desc: ChannelFormatDesc,
    /// The creation flags (`hipArrayLayered`, ...).
    pub type_: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub format: u32,
    pub num_channels: u32,
    pub is_drv: bool,
    pub texture_type: u32,
    // hipshim's own, after the public prefix.
    pub geometry: Geometry,
}

/// Where an array's elements lie (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub data: usize,
    /// Bytes per element.
    pub element: usize,
    /// Elements per row.
    pub width: usize,
    /// Rows per slice (at least 1).
    pub rows: usize,
    /// Slices: depth or layers (at least 1).
    pub slices: usize,
    /// Bytes from one row to the next.
    pub pitch: usize,
    pub flags: u32,
}

impl Geometry {
    pub fn row_bytes(&self) -> usize {
        self.width * self.element
    }

    pub fn slice_pitch(&self) -> usize {
        self.pitch * self.rows
    }

    pub fn bytes(&self) -> usize {
        self.slice_pitch() * self.slices
    }
}

/// `struct hipMipmappedArray`: ROCm 5.2's public layout plus ROCm 6's `num_channels`, then
/// hipshim's levels.
#[repr(C)]
#[derive(Debug)]
pub struct HipMipmappedArray {
    pub data: *mut c_void,
    pub desc: ChannelFormatDesc,
    pub type_: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub min_mipmap_level: u32,
    pub max_mipmap_level: u32,
    pub flags: u32,
    pub format: u32,
    pub num_channels: u32,
    // hipshim's own: each level's array handle.
    levels: Vec<usize>,
}

// SAFETY: the raw pointers are device addresses, never dereferenced through these structs.
unsafe impl Send for HipArray {}
// SAFETY: as above.
unsafe impl Send for HipMipmappedArray {}

/// The live arrays and mipmapped arrays, keyed by handle (the address of their box).
struct Tables {
    arrays: HashMap<usize, Box<HipArray>>,
    mipmaps: HashMap<usize, Box<HipMipmappedArray>>,
}

static TABLES: std::sync::LazyLock<Mutex<Tables>> = std::sync::LazyLock::new(|| {
    Mutex::new(Tables {
        arrays: HashMap::new(),
        mipmaps: HashMap::new(),
    })
});

/// Largest dimensions of an array, as AMD's runtime reports them for gfx9 devices with image
/// support (hipshim's texture limits report these too: programs size arrays by them).
pub use crate::runtime::devices::device_props::{MAX_1D, MAX_2D, MAX_3D, MAX_LAYERS};

// ---------------------------------------------------------------------------------------
// Channel descriptors and formats

/// `hipCreateChannelDesc`: just the five fields (checked when used).
pub fn create_channel_desc(x: i32, y: i32, z: i32, w: i32, f: u32) -> ChannelFormatDesc {
    ChannelFormatDesc { x, y, z, w, f }
}

/// Bytes per element of a descriptor arrays can hold: 1, 2 or 4 channels of equal size (8, 16
/// or 32 bits; floats 16 or 32), with no channel after an empty one, of a known kind.
pub fn element_size(desc: &ChannelFormatDesc) -> HipResult<usize> {
    let bits = [desc.x, desc.y, desc.z, desc.w];
    let channels = bits.iter().take_while(|&&b| b != 0).count();
    let valid = matches!(channels, 1 | 2 | 4)
        && bits[channels..].iter().all(|&b| b == 0)
        && bits[..channels].iter().all(|&b| b == bits[0])
        && match desc.f {
            channel_kind::SIGNED | channel_kind::UNSIGNED => matches!(bits[0], 8 | 16 | 32),
            channel_kind::FLOAT => matches!(bits[0], 16 | 32),
            _ => false,
        };
    if !valid {
        tracing::warn!(?desc, "channel descriptor arrays cannot hold (1, 2 or 4 equal channels of 8/16/32 bits of a known kind)");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(channels * bits[0] as usize / 8)
}

/// The driver format and channel count of a (valid) channel descriptor.
pub(crate) fn format_of(desc: &ChannelFormatDesc) -> (u32, u32) {
    use array_format::*;
    let channels = [desc.x, desc.y, desc.z, desc.w]
        .iter()
        .filter(|&&b| b != 0)
        .count() as u32;
    let format = match (desc.f, desc.x) {
        (channel_kind::FLOAT, 16) => HALF,
        (channel_kind::FLOAT, _) => FLOAT,
        (channel_kind::SIGNED, 8) => SIGNED_INT8,
        (channel_kind::SIGNED, 16) => SIGNED_INT16,
        (channel_kind::SIGNED, _) => SIGNED_INT32,
        (_, 8) => UNSIGNED_INT8,
        (_, 16) => UNSIGNED_INT16,
        _ => UNSIGNED_INT32,
    };
    (format, channels)
}

/// The channel descriptor of a driver format with `channels` channels.
pub(crate) fn desc_of_format(format: u32, channels: u32) -> HipResult<ChannelFormatDesc> {
    use array_format::*;
    let (bits, kind) = match format {
        UNSIGNED_INT8 => (8, channel_kind::UNSIGNED),
        UNSIGNED_INT16 => (16, channel_kind::UNSIGNED),
        UNSIGNED_INT32 => (32, channel_kind::UNSIGNED),
        SIGNED_INT8 => (8, channel_kind::SIGNED),
        SIGNED_INT16 => (16, channel_kind::SIGNED),
        SIGNED_INT32 => (32, channel_kind::SIGNED),
        HALF => (16, channel_kind::FLOAT),
        FLOAT => (32, channel_kind::FLOAT),
        _ => {
            tracing::warn!(format, "unknown hipArray_Format");
            return Err(HipError::INVALID_VALUE);
        }
    };
    if !matches!(channels, 1 | 2 | 4) {
        tracing::warn!(channels, "arrays have 1, 2 or 4 channels");
        return Err(HipError::INVALID_VALUE);
    }
    let c = |i: u32| if i < channels { bits } else { 0 };
    Ok(ChannelFormatDesc {
        x: c(0),
        y: c(1),
        z: c(2),
        w: c(3),
        f: kind,
    })
}

// ---------------------------------------------------------------------------------------
// Creation

/// What an array is asked to be: a runtime-API descriptor, its extent in elements (height 0:
/// 1D; depth 0: 2D) and flags.
#[derive(Clone, Copy, Debug)]
pub struct ArraySpec {
    pub desc: ChannelFormatDesc,
    pub extent: Extent,
    pub flags: u32,
    /// Made through the driver API (`hipArrayCreate`, `hipArray3DCreate`).
    pub driver: bool,
}

impl ArraySpec {
    /// The spec of a driver-API 2D descriptor.
    pub fn from_descriptor(d: &ArrayDescriptor) -> HipResult<ArraySpec> {
        Ok(ArraySpec {
            desc: desc_of_format(d.format, d.num_channels)?,
            extent: Extent {
                width: d.width,
                height: d.height,
                depth: 0,
            },
            flags: 0,
            driver: true,
        })
    }

    pub fn from_3d_descriptor(d: &Array3DDescriptor) -> HipResult<ArraySpec> {
        Ok(ArraySpec {
            desc: desc_of_format(d.format, d.num_channels)?,
            extent: Extent {
                width: d.width,
                height: d.height,
                depth: d.depth,
            },
            flags: d.flags,
            driver: true,
        })
    }

    /// Checks the spec (AMD's rules: a width, known flags, flags that fit the dimensions, a
    /// cubemap of 6 square faces, sizes within the limits) and lays it out.
    fn geometry(&self) -> HipResult<(Geometry, u32)> {
        use array_flags::*;
        let element = element_size(&self.desc)?;
        let Extent {
            width,
            height,
            depth,
        } = self.extent;
        let flags = self.flags;
        let bad = |why: &str| {
            tracing::warn!(extent = ?self.extent, flags, "array: {why}");
            Err(HipError::INVALID_VALUE)
        };
        if flags & !ALL != 0 {
            return bad("unknown flags");
        }
        if width == 0 {
            return bad("zero width");
        }
        let layered = flags & LAYERED != 0;
        let cubemap = flags & CUBEMAP != 0;
        if flags & TEXTURE_GATHER != 0 && (depth != 0 || flags != TEXTURE_GATHER) {
            return bad("texture gather is for plain 2D arrays");
        }
        let (kind, rows, slices, max) = if cubemap {
            let faces_ok = if layered {
                depth > 0 && depth.is_multiple_of(6)
            } else {
                depth == 6
            };
            if height == 0 || width != height || !faces_ok {
                return bad("a cubemap has square faces, 6 per layer");
            }
            let kind = if layered {
                texture_type::CUBEMAP_LAYERED
            } else {
                texture_type::CUBEMAP
            };
            (kind, height, depth, [MAX_2D, MAX_2D, MAX_LAYERS * 6])
        } else if layered {
            if depth == 0 {
                return bad("a layered array needs layers (its depth)");
            }
            if height == 0 {
                (texture_type::T1D_LAYERED, 1, depth, [MAX_1D, 1, MAX_LAYERS])
            } else {
                (
                    texture_type::T2D_LAYERED,
                    height,
                    depth,
                    [MAX_2D, MAX_2D, MAX_LAYERS],
                )
            }
        } else if height == 0 {
            if depth != 0 {
                return bad("a 1D array has no depth");
            }
            (texture_type::T1D, 1, 1, [MAX_1D, 1, 1])
        } else if depth == 0 {
            (texture_type::T2D, height, 1, [MAX_2D, MAX_2D, 1])
        } else {
            (texture_type::T3D, height, depth, [MAX_3D, MAX_3D, MAX_3D])
        };
        if width > max[0] || rows > max[1] || slices > max[2] {
            return bad("larger than the device's array limits");
        }
        let pitch = memory::pitch_for(width * element).ok_or(HipError::INVALID_VALUE)?;
        Ok((
            Geometry {
                data: 0,
                element,
                width,
                rows,
                slices,
                pitch,
                flags,
            },
            kind,
        ))
    }
}

/// `hipMallocArray`, `hipMalloc3DArray`, `hipArrayCreate`, `hipArray3DCreate`: a new array
/// on `device` (the current device); returns its handle.
pub fn create(device: &Device, spec: &ArraySpec) -> HipResult<*mut HipArray> {
    let (mut geometry, texture_type) = spec.geometry()?;
    let data = memory::malloc(device, geometry.bytes())?;
    geometry.data = data as usize;
    let (format, num_channels) = format_of(&spec.desc);
    let array = Box::new(HipArray {
        data,
        desc: spec.desc,
        type_: spec.flags,
        width: spec.extent.width as u32,
        height: spec.extent.height as u32,
        depth: spec.extent.depth as u32,
        format,
        num_channels,
        is_drv: spec.driver,
        texture_type,
        geometry,
    });
    let handle = &*array as *const HipArray as *mut HipArray;
    TABLES.lock().arrays.insert(handle as usize, array);
    tracing::debug!(
        ?geometry,
        handle = format_args!("{handle:p}"),
        "array created"
    );
    Ok(handle)
}

/// The geometry of live array `handle`; null is `hipErrorInvalidValue`, anything else that is
/// not a live array `hipErrorInvalidHandle`.
pub fn geometry(handle: *const HipArray) -> HipResult<Geometry> {
    let (geometry, _) = describe(handle)?;
    Ok(geometry)
}

/// Whether `handle` is a live array (any other value is simply not one).
pub fn is_live(handle: *const HipArray) -> bool {
    TABLES.lock().arrays.contains_key(&(handle as usize))
}

/// The geometry and the creation spec of live array `handle`.
pub fn describe(handle: *const HipArray) -> HipResult<(Geometry, ArraySpec)> {
    if handle.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let tables = TABLES.lock();
    let Some(a) = tables.arrays.get(&(handle as usize)) else {
        tracing::warn!(handle = format_args!("{handle:p}"), "not a live hipArray");
        return Err(HipError::INVALID_HANDLE);
    };
    let spec = ArraySpec {
        desc: a.desc,
        extent: Extent {
            width: a.width as usize,
            height: a.height as usize,
            depth: a.depth as usize,
        },
        flags: a.type_,
        driver: a.is_drv,
    };
    Ok((a.geometry, spec))
}

/// `hipFreeArray` / `hipArrayDestroy`: after the device's work (the memory goes as `hipFree`
/// lets it go, after the work of `devices`). Arrays that are levels of a mipmapped array go
/// with it, not alone.
pub fn destroy(devices: &[Device], handle: *mut HipArray) -> HipResult {
    if handle.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let mut tables = TABLES.lock();
    let owned_by_mipmap = tables
        .mipmaps
        .values()
        .any(|m| m.levels.contains(&(handle as usize)));
    if owned_by_mipmap {
        tracing::warn!("a level of a mipmapped array is freed with its mipmapped array");
        return Err(HipError::INVALID_VALUE);
    }
    let Some(array) = tables.arrays.remove(&(handle as usize)) else {
        tracing::warn!(handle = format_args!("{handle:p}"), "not a live hipArray");
        return Err(compat::dead_handle(HipError::INVALID_HANDLE));
    };
    drop(tables);
    // SAFETY: `data` came from `memory::malloc` and is freed once (the entry is gone).
    unsafe { memory::free(devices, array.data) }
}

// ---------------------------------------------------------------------------------------
// Descriptors

/// `hipArrayGetInfo`: descriptor, extent (as created) and flags.
pub fn info(handle: *const HipArray) -> HipResult<(ChannelFormatDesc, Extent, u32)> {
    let (_, spec) = describe(handle)?;
    Ok((spec.desc, spec.extent, spec.flags))
}

/// `hipArrayGetDescriptor`: 1D and 2D arrays only (AMD and CUDA reject 3D ones).
pub fn descriptor(handle: *const HipArray) -> HipResult<ArrayDescriptor> {
    let (_, spec) = describe(handle)?;
    if spec.extent.depth != 0 {
        tracing::warn!("hipArrayGetDescriptor of a 3D or layered array");
        return Err(HipError::INVALID_VALUE);
    }
    let (format, num_channels) = format_of(&spec.desc);
    Ok(ArrayDescriptor {
        width: spec.extent.width,
        height: spec.extent.height,
        format,
        num_channels,
    })
}

/// `hipArray3DGetDescriptor`.
pub fn descriptor_3d(handle: *const HipArray) -> HipResult<Array3DDescriptor> {
    let (_, spec) = describe(handle)?;
    let (format, num_channels) = format_of(&spec.desc);
    Ok(Array3DDescriptor {
        width: spec.extent.width,
        height: spec.extent.height,
        depth: spec.extent.depth,
        format,
        num_channels,
        flags: spec.flags,
    })
}

// ---------------------------------------------------------------------------------------
// Mipmapped arrays

/// `hipMallocMipmappedArray` / `hipMipmappedArrayCreate`: `levels` arrays (at least 1, at most
/// down to 1x1x1), level `i` with each dimension halved `i` times (at least 1), on the
/// current one of `devices`.
pub fn create_mipmapped(
    devices: &[Device],
    spec: &ArraySpec,
    levels: u32,
) -> HipResult<*mut HipMipmappedArray> {
    let Extent {
        width,
        height,
        depth,
    } = spec.extent;
    if spec.flags & array_flags::LAYERED != 0 || spec.flags & array_flags::CUBEMAP != 0 {
        // Layers and faces keep their count from level to level; nothing here needs them yet.
        tracing::warn!(
            flags = spec.flags,
            "layered and cubemap mipmapped arrays are not supported"
        );
        return Err(HipError::NOT_SUPPORTED);
    }
    let largest = width.max(height).max(depth).max(1);
    let most = usize::BITS - largest.leading_zeros();
    if levels == 0 || levels > most {
        tracing::warn!(levels, most, "mipmap level count out of range");
        return Err(HipError::INVALID_VALUE);
    }
    // Checks the whole spec before anything is allocated.
    spec.geometry()?;
    let device = current::device(devices)?;
    let halve = |n: usize, i: u32| if n == 0 { 0 } else { (n >> i).max(1) };
    let mut handles: Vec<usize> = Vec::with_capacity(levels as usize);
    for i in 0..levels {
        let level = ArraySpec {
            extent: Extent {
                width: halve(width, i),
                height: halve(height, i),
                depth: halve(depth, i),
            },
            ..*spec
        };
        match create(device, &level) {
            Ok(h) => handles.push(h as usize),
            Err(e) => {
                for &h in &handles {
                    let _ = destroy(devices, h as *mut HipArray);
                }
                return Err(e);
            }
        }
    }
    let (format, num_channels) = format_of(&spec.desc);
    let first = handles[0];
    let mipmap = Box::new(HipMipmappedArray {
        data: geometry(first as *const HipArray)?.data as *mut c_void,
        desc: spec.desc,
        type_: spec.flags,
        width: width as u32,
        height: height as u32,
        depth: depth as u32,
        min_mipmap_level: 0,
        max_mipmap_level: levels - 1,
        flags: spec.flags,
        format,
        num_channels,
        levels: handles,
    });
    let handle = &*mipmap as *const HipMipmappedArray as *mut HipMipmappedArray;
    TABLES.lock().mipmaps.insert(handle as usize, mipmap);
    Ok(handle)
}

/// The level handles of live mipmapped array `handle`, given to `f` under the table lock.
fn with_levels<T>(
    handle: *const HipMipmappedArray,
    f: impl FnOnce(&[usize]) -> HipResult<T>,
) -> HipResult<T> {
    if handle.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let tables = TABLES.lock();
    let Some(m) = tables.mipmaps.get(&(handle as usize)) else {
        tracing::warn!(
            handle = format_args!("{handle:p}"),
            "not a live hipMipmappedArray"
        );
        return Err(HipError::INVALID_HANDLE);
    };
    f(&m.levels)
}

/// `hipGetMipmappedArrayLevel` / `hipMipmappedArrayGetLevel`.
pub fn mipmapped_level(handle: *const HipMipmappedArray, level: u32) -> HipResult<*mut HipArray> {
    with_levels(handle, |levels| {
        levels
            .get(level as usize)
            .map(|&h| h as *mut HipArray)
            .ok_or_else(|| {
                tracing::warn!(level, levels = levels.len(), "no such mipmap level");
                HipError::INVALID_VALUE
            })
    })
}

/// How many levels live mipmapped array `handle` has.
pub fn mipmapped_levels(handle: *const HipMipmappedArray) -> HipResult<usize> {
    with_levels(handle, |levels| Ok(levels.len()))
}

/// `hipFreeMipmappedArray` / `hipMipmappedArrayDestroy`: every level with it (after the work
/// of `devices`).
pub fn destroy_mipmapped(devices: &[Device], handle: *mut HipMipmappedArray) -> HipResult {
    if handle.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    let Some(m) = TABLES.lock().mipmaps.remove(&(handle as usize)) else {
        tracing::warn!(
            handle = format_args!("{handle:p}"),
            "not a live hipMipmappedArray"
        );
        return Err(HipError::INVALID_HANDLE);
    };
    let mut result = Ok(());
    for &level in &m.levels {
        result = result.and(destroy(devices, level as *mut HipArray));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(bits: i32, channels: usize, f: u32) -> ChannelFormatDesc {
        let c = |i| if i < channels { bits } else { 0 };
        create_channel_desc(c(0), c(1), c(2), c(3), f)
    }

    #[test]
    fn the_public_prefix_has_rocm_5_2s_offsets() {
        assert_eq!(std::mem::offset_of!(HipArray, desc), 8);
        assert_eq!(std::mem::offset_of!(HipArray, type_), 28);
        assert_eq!(std::mem::offset_of!(HipArray, width), 32);
        assert_eq!(std::mem::offset_of!(HipArray, depth), 40);
        assert_eq!(std::mem::offset_of!(HipArray, format), 44);
        assert_eq!(std::mem::offset_of!(HipArray, num_channels), 48);
        assert_eq!(std::mem::offset_of!(HipArray, is_drv), 52);
        assert_eq!(std::mem::offset_of!(HipArray, texture_type), 56);
        assert_eq!(std::mem::offset_of!(HipMipmappedArray, flags), 52);
        assert_eq!(std::mem::offset_of!(HipMipmappedArray, format), 56);
        assert_eq!(std::mem::offset_of!(HipMipmappedArray, num_channels), 60);
        assert_eq!(std::mem::size_of::<ChannelFormatDesc>(), 20);
        assert_eq!(std::mem::size_of::<PitchedPtr>(), 32);
        assert_eq!(std::mem::size_of::<ArrayDescriptor>(), 24);
        assert_eq!(std::mem::size_of::<Array3DDescriptor>(), 40);
    }

    #[test]
    fn element_sizes_follow_amds_channel_rules() {
        use channel_kind::*;
        assert_eq!(element_size(&desc(32, 4, FLOAT)), Ok(16));
        assert_eq!(element_size(&desc(8, 1, UNSIGNED)), Ok(1));
        assert_eq!(element_size(&desc(16, 2, FLOAT)), Ok(4));
        for bad in [
            desc(8, 1, FLOAT),
            desc(32, 3, SIGNED),
            desc(10, 1, SIGNED),
            desc(0, 0, SIGNED),
            desc(32, 1, 3),
            create_channel_desc(8, 16, 0, 0, UNSIGNED),
            create_channel_desc(0, 8, 8, 0, UNSIGNED),
            create_channel_desc(8, 8, 0, 8, UNSIGNED),
        ] {
            assert_eq!(element_size(&bad), Err(HipError::INVALID_VALUE), "{bad:?}");
        }
    }

    #[test]
    fn formats_and_descriptors_round_trip() {
        for (bits, channels, kind) in [(8, 1, 0), (16, 2, 1), (32, 4, 2), (16, 4, 2), (32, 1, 0)] {
            let d = desc(bits, channels, kind);
            let (format, n) = format_of(&d);
            assert_eq!(desc_of_format(format, n), Ok(d));
        }
    }

    #[test]
    fn geometry_pads_rows_to_the_pitch_alignment_and_checks_flags() {
        use array_flags::*;
        let spec = |w, h, d, flags| ArraySpec {
            desc: desc(32, 1, channel_kind::FLOAT),
            extent: Extent {
                width: w,
                height: h,
                depth: d,
            },
            flags,
            driver: false,
        };
        let (g, kind) = spec(67, 5, 3, 0).geometry().unwrap();
        assert_eq!((g.pitch, g.rows, g.slices, kind), (512, 5, 3, 0x03));
        let (g, _) = spec(10, 0, 0, 0).geometry().unwrap();
        assert_eq!((g.rows, g.slices), (1, 1));
        let (g, kind) = spec(10, 0, 7, LAYERED).geometry().unwrap();
        assert_eq!((g.rows, g.slices, kind), (1, 7, 0xf1));
        assert!(spec(6, 6, 6, CUBEMAP).geometry().is_ok());
        for bad in [
            spec(0, 4, 0, 0),
            spec(4, 4, 0, 0xdead_beef),
            spec(4, 0, 0, CUBEMAP),
            spec(6, 5, 6, CUBEMAP),
            spec(4, 0, 2, 0),
            spec(MAX_2D + 1, 1, 0, 0),
            spec(4, 4, 4, TEXTURE_GATHER),
        ] {
            assert_eq!(
                bad.geometry().err(),
                Some(HipError::INVALID_VALUE),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn handles_that_were_never_arrays_are_rejected_unread() {
        let bogus = 0x10 as *const HipArray;
        assert_eq!(geometry(bogus), Err(HipError::INVALID_HANDLE));
        assert_eq!(geometry(std::ptr::null()), Err(HipError::INVALID_VALUE));
        assert_eq!(
            destroy(&[], 0x20 as *mut HipArray),
            Err(compat::dead_handle(HipError::INVALID_HANDLE))
        );
        assert_eq!(
            mipmapped_level(0x30 as *const HipMipmappedArray, 0),
            Err(HipError::INVALID_HANDLE)
        );
    }
}
