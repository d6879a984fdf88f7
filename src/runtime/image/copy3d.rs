//! Every array, 3D and pitched-memory copy as one checked description, [`Copy3D`], carried out
//! by the copy engine of `copy.rs` as pitched row copies ([`Rows`]).
//!
//! A side of a copy is pitched memory (host or device: a pointer, a row pitch and the rows of
//! a slice) or an array (`array.rs`: device memory whose layout the array knows), with a
//! position in it; the box is `width` bytes by `height` rows by `depth` slices. The C
//! structures (`hipMemcpy3DParms`, `HIP_MEMCPY3D`, `hip_Memcpy2D`, `hipMemcpy3DPeerParms`) and
//! the array calls with offsets (`hipMemcpy2DToArray`, `hipMemcpyAtoH`, ...) are each turned
//! into a `Copy3D`; [`copy_3d`] checks it against the arrays' extents, resolves both sides to
//! addresses, and issues one pitched copy (slices that follow each other as rows merge into
//! one) or one per slice.
//!
//! The 1D-offset calls (`hipMemcpyToArray`, `hipMemcpyAtoH`, ...) address an array as its
//! elements packed row after row (CUDA's rule): [`linear_copy`] splits such a run at the
//! array's row ends into pieces, and merges pieces of equal length and stride back into rows.
//!
//! Units (CUDA's and AMD's): in `hipMemcpy3DParms` a position is in elements of its object
//! (bytes for a pointer) and the extent in elements of the array taking part (bytes if none
//! does); the driver structures are in bytes throughout.
//!
//! Synchronous copies follow `hipMemcpy2D`'s rules, stream-ordered ones `hipMemcpy2DAsync`'s
//! (`copy.rs`).

use crate::error::{HipError, HipResult};
use crate::runtime::base::compat;
use crate::runtime::copy::{self, CopyKind, Rows};
use crate::runtime::image::array::{self, Extent, HipArray, PitchedPtr, Pos};
use std::ffi::c_void;

/// `hipMemcpy3DParms` (the same in ROCm 5, 6 and 7).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DParms {
    pub src_array: *mut HipArray,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub dst_array: *mut HipArray,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: u32,
}

/// `hipMemcpy3DPeerParms` (ROCm 7; CUDA's `cudaMemcpy3DPeerParms` layout).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DPeerParms {
    pub src_array: *mut HipArray,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub src_device: i32,
    pub dst_array: *mut HipArray,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub dst_device: i32,
    pub extent: Extent,
}

/// `HIP_MEMCPY3D` as ROCm 6 and 7 lay it out (`size_t` fields; ROCm 5's `unsigned int` form is
/// read by `DrvMemcpy3D::read`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DrvMemcpy3D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: *mut c_void,
    pub src_array: *mut HipArray,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: *mut c_void,
    pub dst_array: *mut HipArray,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// `HIP_MEMCPY3D` as ROCm 5 lays it out: `unsigned int` offsets and sizes (128 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DrvMemcpy3DRocm5 {
    src_x_in_bytes: u32,
    src_y: u32,
    src_z: u32,
    src_lod: u32,
    src_memory_type: u32,
    src_host: *const c_void,
    src_device: *mut c_void,
    src_array: *mut HipArray,
    src_pitch: u32,
    src_height: u32,
    dst_x_in_bytes: u32,
    dst_y: u32,
    dst_z: u32,
    dst_lod: u32,
    dst_memory_type: u32,
    dst_host: *mut c_void,
    dst_device: *mut c_void,
    dst_array: *mut HipArray,
    dst_pitch: u32,
    dst_height: u32,
    width_in_bytes: u32,
    height: u32,
    depth: u32,
}

const _: () = {
    assert!(std::mem::size_of::<DrvMemcpy3DRocm5>() == 128);
    assert!(std::mem::offset_of!(DrvMemcpy3DRocm5, src_host) == 24);
    assert!(std::mem::offset_of!(DrvMemcpy3DRocm5, dst_x_in_bytes) == 56);
    assert!(std::mem::offset_of!(DrvMemcpy3DRocm5, dst_host) == 80);
    assert!(std::mem::offset_of!(DrvMemcpy3DRocm5, depth) == 120);
};

impl DrvMemcpy3D {
    /// The program's `HIP_MEMCPY3D` at `p`, in the layout of the ABI it was built for
    /// (`compat::abi`): ROCm 5's `unsigned int` fields or ROCm 6's `size_t` ones.
    ///
    /// # Safety
    /// `p` is null or points to a `HIP_MEMCPY3D` of that layout.
    pub unsafe fn read(p: *const DrvMemcpy3D) -> HipResult<DrvMemcpy3D> {
        if p.is_null() {
            return Err(HipError::INVALID_VALUE);
        }
        if compat::abi() != compat::Abi::Rocm5 {
            // SAFETY: the caller's contract, ROCm 6's layout.
            return Ok(unsafe { p.read() });
        }
        // SAFETY: the caller's contract, ROCm 5's layout.
        let o = unsafe { p.cast::<DrvMemcpy3DRocm5>().read() };
        let wide = |v: u32| v as usize;
        Ok(DrvMemcpy3D {
            src_x_in_bytes: wide(o.src_x_in_bytes),
            src_y: wide(o.src_y),
            src_z: wide(o.src_z),
            src_lod: wide(o.src_lod),
            src_memory_type: o.src_memory_type,
            src_host: o.src_host,
            src_device: o.src_device,
            src_array: o.src_array,
            src_pitch: wide(o.src_pitch),
            src_height: wide(o.src_height),
            dst_x_in_bytes: wide(o.dst_x_in_bytes),
            dst_y: wide(o.dst_y),
            dst_z: wide(o.dst_z),
            dst_lod: wide(o.dst_lod),
            dst_memory_type: o.dst_memory_type,
            dst_host: o.dst_host,
            dst_device: o.dst_device,
            dst_array: o.dst_array,
            dst_pitch: wide(o.dst_pitch),
            dst_height: wide(o.dst_height),
            width_in_bytes: wide(o.width_in_bytes),
            height: wide(o.height),
            depth: wide(o.depth),
        })
    }
}

/// `hip_Memcpy2D` (the same layout in ROCm 5, 6 and 7).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy2DParams {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: *mut c_void,
    pub src_array: *mut HipArray,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: *mut c_void,
    pub dst_array: *mut HipArray,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// What one side of a copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Host or device memory: `pitch` bytes per row, `rows` rows per slice (only read when
    /// the copy has more than one slice).
    Pitched {
        ptr: usize,
        pitch: usize,
        rows: usize,
    },
    /// A `hipArray_t` (checked when the copy runs).
    Array(usize),
}

/// One side: where it is, and where the box starts in it (`x` in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side3D {
    pub place: Place,
    pub pos: Pos,
}

/// A checked-on-use description of any array, 3D or pitched copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy3D {
    pub dst: Side3D,
    pub src: Side3D,
    /// `width` in bytes, `height` rows, `depth` slices.
    pub extent: Extent,
    pub kind: CopyKind,
}

/// `hipMemcpy3DOperand` (ROCm 7.1): a type word, then a 32-byte union: a pointer operand
/// (`ptr`, `rowLength` and `layerHeight` in elements, a location hint) or an array operand
/// (`array`, the offset in elements).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DOperand {
    /// `hipMemcpy3DOperandType`: 1 a pointer, 2 an array.
    pub type_: u32,
    pub _pad: u32,
    /// `ptr.ptr` or `array.array`.
    pub base: usize,
    /// `ptr.rowLength` or `array.offset.x`.
    pub a: usize,
    /// `ptr.layerHeight` or `array.offset.y`.
    pub b: usize,
    /// `ptr.locHint` (a hint, unused) or `array.offset.z`.
    pub c: usize,
}

/// `hipMemcpy3DBatchOp`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DBatchOp {
    pub src: Memcpy3DOperand,
    pub dst: Memcpy3DOperand,
    pub extent: Extent,
    /// `hipMemcpySrcAccessOrder`.
    pub src_access_order: u32,
    /// `hipMemcpyFlags`.
    pub flags: u32,
}

const _: () = {
    assert!(std::mem::size_of::<Memcpy3DOperand>() == 40);
    assert!(std::mem::size_of::<Memcpy3DBatchOp>() == 112);
    assert!(std::mem::offset_of!(Memcpy3DBatchOp, extent) == 80);
};

const OPERAND_POINTER: u32 = 1;
const OPERAND_ARRAY: u32 = 2;

impl Memcpy3DOperand {
    /// The side this operand is, with `extent` for a pointer's defaults: a `rowLength` or
    /// `layerHeight` of 0 means rows and layers packed as the extent is.
    fn side(&self, extent: &Extent, element: usize, what: &str) -> HipResult<Side3D> {
        match self.type_ {
            OPERAND_POINTER if self.base != 0 => {
                let row_length = if self.a == 0 { extent.width } else { self.a };
                let rows = if self.b == 0 { extent.height } else { self.b };
                Ok(Side3D {
                    place: Place::Pitched {
                        ptr: self.base,
                        pitch: row_length
                            .checked_mul(element)
                            .ok_or(HipError::INVALID_VALUE)?,
                        rows,
                    },
                    pos: Pos { x: 0, y: 0, z: 0 },
                })
            }
            OPERAND_ARRAY if self.base != 0 => {
                let array = Place::Array(self.base);
                let own = element_of(&Side3D {
                    place: array,
                    pos: Pos { x: 0, y: 0, z: 0 },
                })?;
                Ok(Side3D {
                    place: array,
                    pos: Pos {
                        x: self.a.checked_mul(own).ok_or(HipError::INVALID_VALUE)?,
                        y: self.b,
                        z: self.c,
                    },
                })
            }
            kind => {
                tracing::warn!(
                    kind,
                    "hipMemcpy3DBatchAsync: the {what} is not a pointer or an array, or is null"
                );
                Err(HipError::INVALID_VALUE)
            }
        }
    }
}

impl Copy3D {
    /// A `hipMemcpy3DBatchOp`: the extent is in elements of the array taking part (the
    /// source's if both are arrays), in bytes between two pointers. Whether the source is read
    /// during the call is the caller's to honour (`copy::check_order_and_flags` says).
    pub fn from_batch_op(op: &Memcpy3DBatchOp) -> HipResult<Copy3D> {
        copy::check_order_and_flags(op.src_access_order, op.flags)?;
        let array_element = |o: &Memcpy3DOperand| -> HipResult<Option<usize>> {
            if o.type_ == OPERAND_ARRAY && o.base != 0 {
                Ok(Some(array::geometry(o.base as *const HipArray)?.element))
            } else {
                Ok(None)
            }
        };
        let element = match (array_element(&op.src)?, array_element(&op.dst)?) {
            (Some(e), _) | (None, Some(e)) => e,
            (None, None) => 1,
        };
        let width = op
            .extent
            .width
            .checked_mul(element)
            .ok_or(HipError::INVALID_VALUE)?;
        Ok(Copy3D {
            src: op.src.side(&op.extent, element, "source")?,
            dst: op.dst.side(&op.extent, element, "destination")?,
            extent: Extent { width, ..op.extent },
            kind: CopyKind::Default,
        })
    }

    /// The memory of each pointer side holds the whole box: the slices are copied one by one,
    /// and a slice that starts past the end of its allocation would on its own be taken for
    /// host memory (`plan` computes addresses only).
    fn check_memory(&self) -> HipResult {
        let e = self.extent;
        if e.width == 0 || e.height == 0 || e.depth <= 1 {
            return Ok(());
        }
        for (side, what) in [(&self.dst, "destination"), (&self.src, "source")] {
            let side = resolve(side, &e, what)?;
            if side.is_array {
                continue;
            }
            let span = (e.depth - 1)
                .checked_mul(side.slice_pitch)
                .and_then(|s| s.checked_add((e.height - 1).checked_mul(side.pitch)?))
                .and_then(|s| s.checked_add(e.width))
                .ok_or(HipError::INVALID_VALUE)?;
            copy::check_span(side.base, span, what)?;
        }
        Ok(())
    }

    /// The checks `copy_3d` makes before the first byte moves, without moving any.
    pub fn check(&self) -> HipResult {
        self.plan()?;
        self.check_memory()
    }
}

/// The one side of a runtime-API structure: exactly one of the array and the pointer.
fn runtime_side(array: *mut HipArray, ptr: &PitchedPtr, pos: Pos, what: &str) -> HipResult<Side3D> {
    let place = match (array.is_null(), ptr.ptr.is_null()) {
        (false, true) => Place::Array(array as usize),
        (true, false) => Place::Pitched {
            ptr: ptr.ptr as usize,
            pitch: ptr.pitch,
            rows: ptr.ysize,
        },
        (both_null, _) => {
            tracing::warn!(
                "hipMemcpy3D: the {what} names {} an array and a pointer",
                if both_null { "neither" } else { "both" }
            );
            return Err(HipError::INVALID_VALUE);
        }
    };
    Ok(Side3D { place, pos })
}

/// Bytes per element of the array a side names, 1 for memory.
fn element_of(side: &Side3D) -> HipResult<usize> {
    match side.place {
        Place::Array(a) => Ok(array::geometry(a as *const HipArray)?.element),
        Place::Pitched { .. } => Ok(1),
    }
}

impl Copy3D {
    /// A `hipMemcpy3DParms` (positions and extent in elements, converted to bytes here).
    pub fn from_abi(p: &Memcpy3DParms) -> HipResult<Copy3D> {
        let kind = CopyKind::from_raw(p.kind)?;
        let mut src = runtime_side(p.src_array, &p.src_ptr, p.src_pos, "source")?;
        let mut dst = runtime_side(p.dst_array, &p.dst_ptr, p.dst_pos, "destination")?;
        let (src_element, dst_element) = (element_of(&src)?, element_of(&dst)?);
        // The extent is in elements of the array taking part (the source's if both do).
        let element = if matches!(src.place, Place::Array(_)) {
            src_element
        } else {
            dst_element
        };
        src.pos.x = src
            .pos
            .x
            .checked_mul(src_element)
            .ok_or(HipError::INVALID_VALUE)?;
        dst.pos.x = dst
            .pos
            .x
            .checked_mul(dst_element)
            .ok_or(HipError::INVALID_VALUE)?;
        let width = p
            .extent
            .width
            .checked_mul(element)
            .ok_or(HipError::INVALID_VALUE)?;
        Ok(Copy3D {
            dst,
            src,
            extent: Extent { width, ..p.extent },
            kind,
        })
    }

    /// A `hipMemcpy3DPeerParms`: the pointers say which devices (unified addressing), so the
    /// device numbers are only checked (against the `device_count` the process has).
    pub fn from_peer(device_count: usize, p: &Memcpy3DPeerParms) -> HipResult<Copy3D> {
        for device in [p.src_device, p.dst_device] {
            if device < 0 || device as usize >= device_count {
                return Err(HipError::INVALID_DEVICE);
            }
        }
        Copy3D::from_abi(&Memcpy3DParms {
            src_array: p.src_array,
            src_pos: p.src_pos,
            src_ptr: p.src_ptr,
            dst_array: p.dst_array,
            dst_pos: p.dst_pos,
            dst_ptr: p.dst_ptr,
            extent: p.extent,
            kind: 4,
        })
    }

    /// A `HIP_MEMCPY3D` (bytes throughout; the kind follows from where the memory is).
    pub fn from_drv(p: &DrvMemcpy3D) -> HipResult<Copy3D> {
        if p.src_lod != 0 || p.dst_lod != 0 {
            tracing::warn!("HIP_MEMCPY3D: level-of-detail copies are not supported");
            return Err(HipError::INVALID_VALUE);
        }
        let abi = compat::abi();
        let (width, height) = (p.width_in_bytes, p.height);
        let src = driver_side(
            abi,
            p.src_memory_type,
            p.src_host as usize,
            p.src_device as usize,
            p.src_array as usize,
            packed(p.src_pitch, width),
            packed(p.src_height, height),
        )?;
        let dst = driver_side(
            abi,
            p.dst_memory_type,
            p.dst_host as usize,
            p.dst_device as usize,
            p.dst_array as usize,
            packed(p.dst_pitch, width),
            packed(p.dst_height, height),
        )?;
        Ok(Copy3D {
            dst: Side3D {
                place: dst,
                pos: Pos {
                    x: p.dst_x_in_bytes,
                    y: p.dst_y,
                    z: p.dst_z,
                },
            },
            src: Side3D {
                place: src,
                pos: Pos {
                    x: p.src_x_in_bytes,
                    y: p.src_y,
                    z: p.src_z,
                },
            },
            extent: Extent {
                width: p.width_in_bytes,
                height: p.height,
                depth: p.depth,
            },
            kind: CopyKind::Default,
        })
    }

    /// A `hip_Memcpy2D` (`hipMemcpyParam2D`).
    pub fn from_2d(p: &Memcpy2DParams) -> HipResult<Copy3D> {
        let abi = compat::abi();
        let src = driver_side(
            abi,
            p.src_memory_type,
            p.src_host as usize,
            p.src_device as usize,
            p.src_array as usize,
            packed(p.src_pitch, p.width_in_bytes),
            0,
        )?;
        let dst = driver_side(
            abi,
            p.dst_memory_type,
            p.dst_host as usize,
            p.dst_device as usize,
            p.dst_array as usize,
            packed(p.dst_pitch, p.width_in_bytes),
            0,
        )?;
        let pos = |x, y| Pos { x, y, z: 0 };
        Ok(Copy3D {
            dst: Side3D {
                place: dst,
                pos: pos(p.dst_x_in_bytes, p.dst_y),
            },
            src: Side3D {
                place: src,
                pos: pos(p.src_x_in_bytes, p.src_y),
            },
            extent: Extent {
                width: p.width_in_bytes,
                height: p.height,
                depth: 1,
            },
            kind: CopyKind::Default,
        })
    }

    /// A 2D copy between pitched memory and an array at (`x` bytes, `y` rows), as
    /// `hipMemcpy2DToArray` and friends take it.
    pub fn rows(dst: Side3D, src: Side3D, width: usize, height: usize, kind: CopyKind) -> Self {
        Copy3D {
            dst,
            src,
            extent: Extent {
                width,
                height,
                depth: 1,
            },
            kind,
        }
    }
}

/// A driver-API pitch or slice height of 0 means "packed": rows as wide as the copy, slices
/// as tall as it (AMD's runtime reads them so, and hip-tests check it).
fn packed(given: usize, extent: usize) -> usize {
    if given == 0 {
        extent
    } else {
        given
    }
}

/// Which field of a driver-API side names its memory, by `hipMemoryType` in the program's
/// numbering: ROCm 5's headers number it Host 0, Device 1, Array 2, Unified 3; ROCm 6's
/// Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11 (the ABI profile says
/// which, see `compat`). A device type with a null device pointer is a null pointer, whatever
/// the host field holds (hip-tests check it). Whether a pointer is host or device memory is
/// then the memory table's word, not the type's.
fn driver_side(
    abi: compat::Abi,
    memory_type: u32,
    host: usize,
    device: usize,
    array: usize,
    pitch: usize,
    rows: usize,
) -> HipResult<Place> {
    let pitched = |ptr| Place::Pitched { ptr, pitch, rows };
    let rocm5 = abi == compat::Abi::Rocm5;
    Ok(match memory_type {
        0 => pitched(host),
        1 if rocm5 => pitched(device),
        1 => pitched(host),
        2 if rocm5 => Place::Array(array),
        2 | 3 => pitched(device),
        10 if !rocm5 => Place::Array(array),
        11 if !rocm5 => pitched(device),
        _ => {
            tracing::warn!(memory_type, ?abi, "unknown hipMemoryType");
            return Err(HipError::INVALID_VALUE);
        }
    })
}

/// A copy of `rows` between two addresses (what `copy.rs` carries out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RowsCopy {
    dst: usize,
    src: usize,
    rows: Rows,
}

/// A side resolved to an address: the box's first byte, its row pitch and slice pitch.
#[derive(Clone, Copy, Debug)]
struct Resolved {
    base: usize,
    pitch: usize,
    slice_pitch: usize,
    is_array: bool,
}

/// Checks a side against the box and resolves it.
fn resolve(side: &Side3D, extent: &Extent, what: &str) -> HipResult<Resolved> {
    let Pos { x, y, z } = side.pos;
    let fits = |start: usize, len: usize, limit: usize| {
        start.checked_add(len).is_some_and(|end| end <= limit)
    };
    match side.place {
        Place::Array(handle) => {
            let g = array::geometry(handle as *const HipArray)?;
            if !fits(x, extent.width, g.row_bytes())
                || !fits(y, extent.height, g.rows)
                || !fits(z, extent.depth, g.slices)
            {
                tracing::warn!(
                    ?side.pos,
                    ?extent,
                    row_bytes = g.row_bytes(),
                    rows = g.rows,
                    slices = g.slices,
                    "the {what} box runs outside its array"
                );
                return Err(HipError::INVALID_VALUE);
            }
            Ok(Resolved {
                base: g.data + z * g.slice_pitch() + y * g.pitch + x,
                pitch: g.pitch,
                slice_pitch: g.slice_pitch(),
                is_array: true,
            })
        }
        Place::Pitched { ptr, pitch, rows } => {
            if ptr == 0 {
                tracing::warn!("the {what} pointer is null");
                return Err(HipError::INVALID_VALUE);
            }
            if !fits(x, extent.width, pitch) && (extent.height > 1 || extent.depth > 1) {
                tracing::warn!(
                    x,
                    width = extent.width,
                    pitch,
                    "the {what} rows run past their pitch"
                );
                return Err(HipError::INVALID_PITCH_VALUE);
            }
            // A single row needs no pitch; a single slice no slice height.
            let pitch = if extent.height > 1 || extent.depth > 1 {
                pitch
            } else {
                pitch.max(x + extent.width)
            };
            if extent.depth > 1 && !fits(y, extent.height, rows) {
                tracing::warn!(
                    y,
                    height = extent.height,
                    rows,
                    "the {what} slices are shorter than the box"
                );
                return Err(HipError::INVALID_VALUE);
            }
            let slice_pitch = pitch.checked_mul(rows).ok_or(HipError::INVALID_VALUE)?;
            let offset = z
                .checked_mul(slice_pitch)
                .and_then(|o| o.checked_add(y.checked_mul(pitch)?))
                .and_then(|o| o.checked_add(x))
                .ok_or(HipError::INVALID_VALUE)?;
            Ok(Resolved {
                base: ptr.checked_add(offset).ok_or(HipError::INVALID_VALUE)?,
                pitch,
                slice_pitch,
                is_array: false,
            })
        }
    }
}

/// An explicit kind must not put an array (device memory) on the host side.
fn check_array_kind(kind: CopyKind, dst_array: bool, src_array: bool) -> HipResult {
    let (src_host, dst_host) = match kind {
        CopyKind::HostToHost => (true, true),
        CopyKind::HostToDevice => (true, false),
        CopyKind::DeviceToHost => (false, true),
        _ => (false, false),
    };
    if (src_host && src_array) || (dst_host && dst_array) {
        tracing::warn!(?kind, "the copy kind puts an array in host memory");
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

impl Copy3D {
    /// The row copies of this copy, checked; empty for an empty box.
    fn plan(&self) -> HipResult<Vec<RowsCopy>> {
        let e = self.extent;
        if e.width == 0 || e.height == 0 || e.depth == 0 {
            return Ok(Vec::new());
        }
        let dst = resolve(&self.dst, &e, "destination")?;
        let src = resolve(&self.src, &e, "source")?;
        check_array_kind(self.kind, dst.is_array, src.is_array)?;
        // Slices whose rows continue where the previous slice's ended make one copy.
        let merged = e.depth == 1
            || (dst.slice_pitch == dst.pitch * e.height && src.slice_pitch == src.pitch * e.height);
        let rows = |height| Rows {
            width: e.width,
            height,
            dst_pitch: dst.pitch,
            src_pitch: src.pitch,
        };
        if merged {
            let height = e
                .height
                .checked_mul(e.depth)
                .ok_or(HipError::INVALID_VALUE)?;
            return Ok(vec![RowsCopy {
                dst: dst.base,
                src: src.base,
                rows: rows(height),
            }]);
        }
        (0..e.depth)
            .map(|z| {
                Ok(RowsCopy {
                    dst: z
                        .checked_mul(dst.slice_pitch)
                        .and_then(|o| dst.base.checked_add(o))
                        .ok_or(HipError::INVALID_VALUE)?,
                    src: z
                        .checked_mul(src.slice_pitch)
                        .and_then(|o| src.base.checked_add(o))
                        .ok_or(HipError::INVALID_VALUE)?,
                    rows: rows(e.height),
                })
            })
            .collect()
    }
}

/// Carries out row copies: synchronously (`stream` `None`: `hipMemcpy2D`'s rules) or in the
/// stream's order (`hipMemcpy2DAsync`'s).
///
/// # Safety
/// Host memory in the copies is valid for its rows (until the copy completes, for pinned
/// memory in a stream-ordered copy); device memory is checked by the copy engine.
unsafe fn run(
    devices: copy::Devices<'static>,
    copies: &[RowsCopy],
    kind: CopyKind,
    stream: Option<*mut c_void>,
) -> HipResult {
    for c in copies {
        let (dst, src) = (c.dst as *mut c_void, c.src as *const c_void);
        match stream {
            // SAFETY: forwarded contract.
            None => unsafe {
                copy::memcpy(
                    devices,
                    copy::CopyRequest {
                        dst,
                        src,
                        rows: c.rows,
                        kind,
                    },
                )
            }?,
            // SAFETY: forwarded contract.
            Some(s) => unsafe {
                copy::memcpy_async(
                    devices,
                    copy::CopyRequest {
                        dst,
                        src,
                        rows: c.rows,
                        kind,
                    },
                    s,
                )
            }?,
        }
    }
    Ok(())
}

/// Carries out `desc`: synchronously when `stream` is `None` (as `hipMemcpy3D`), else in the
/// stream's order (as `hipMemcpy3DAsync`). Everything is checked before the first byte moves.
/// The entry point for any caller holding a [`Copy3D`] (a graph's memcpy node, too).
///
/// # Safety
/// Host memory named by `desc` is valid for the box (until the copy completes, for pinned
/// memory in a stream-ordered copy); device memory and arrays are checked.
pub unsafe fn copy_3d(
    devices: copy::Devices<'static>,
    desc: &Copy3D,
    stream: Option<*mut c_void>,
) -> HipResult {
    let copies = desc.plan()?;
    desc.check_memory()?;
    // SAFETY: forwarded contract.
    unsafe { run(devices, &copies, desc.kind, stream) }
}

/// One side of a 1D-offset copy: memory, or an array addressed as its elements packed row
/// after row (byte `offset` is row `offset / row_bytes`, column `offset % row_bytes`).
#[derive(Clone, Copy, Debug)]
pub enum Linear {
    Memory(usize),
    Array(*const HipArray, usize),
}

/// Where a run of a linear side lies, as (address, bytes left in its row).
struct LinearSide {
    base: usize,
    /// For an array: row_bytes, pitch, rows per slice and slice pitch; `None` for memory.
    array: Option<array::Geometry>,
    offset: usize,
}

impl LinearSide {
    fn new(side: Linear, count: usize, what: &str) -> HipResult<LinearSide> {
        match side {
            Linear::Memory(ptr) => {
                if ptr == 0 {
                    return Err(HipError::INVALID_VALUE);
                }
                Ok(LinearSide {
                    base: ptr,
                    array: None,
                    offset: 0,
                })
            }
            Linear::Array(handle, offset) => {
                let g = array::geometry(handle)?;
                let packed = g.row_bytes() * g.rows * g.slices;
                if offset.checked_add(count).is_none_or(|end| end > packed) {
                    tracing::warn!(offset, count, packed, "the {what} run goes past its array");
                    return Err(HipError::INVALID_VALUE);
                }
                Ok(LinearSide {
                    base: g.data,
                    array: Some(g),
                    offset,
                })
            }
        }
    }

    /// The address of the next byte and how many follow it contiguously.
    fn here(&self) -> (usize, usize) {
        match self.array {
            None => (self.base + self.offset, usize::MAX),
            Some(g) => {
                let row = self.offset / g.row_bytes();
                let column = self.offset % g.row_bytes();
                (self.base + row * g.pitch + column, g.row_bytes() - column)
            }
        }
    }
}

/// The pieces of a run of `count` bytes, rows of equal length and stride merged.
fn linear_plan(dst: Linear, src: Linear, count: usize) -> HipResult<Vec<RowsCopy>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut d = LinearSide::new(dst, count, "destination")?;
    let mut s = LinearSide::new(src, count, "source")?;
    let mut out: Vec<RowsCopy> = Vec::new();
    let mut left = count;
    while left > 0 {
        let ((da, dn), (sa, sn)) = (d.here(), s.here());
        let len = left.min(dn).min(sn);
        let extends = out.last().is_some_and(|last| {
            let r = last.rows;
            let dst_next = last.dst + r.dst_pitch * (r.height - 1);
            let src_next = last.src + r.src_pitch * (r.height - 1);
            r.width == len
                && da > dst_next
                && sa > src_next
                && (r.height == 1 || (da - dst_next == r.dst_pitch && sa - src_next == r.src_pitch))
        });
        if extends {
            let last = out.last_mut().expect("checked above");
            if last.rows.height == 1 {
                last.rows.dst_pitch = da - last.dst;
                last.rows.src_pitch = sa - last.src;
            }
            last.rows.height += 1;
        } else {
            out.push(RowsCopy {
                dst: da,
                src: sa,
                rows: Rows::linear(len),
            });
        }
        d.offset += len;
        s.offset += len;
        left -= len;
    }
    Ok(out)
}

/// A copy of `count` bytes where either side may be an array addressed by a packed byte
/// offset (`hipMemcpyToArray`, `hipMemcpyAtoH`, `hipMemcpyAtoA`, ...); `stream` as for
/// [`copy_3d`].
///
/// # Safety
/// As for [`copy_3d`], for the `count` bytes of host memory.
pub unsafe fn linear_copy(
    devices: copy::Devices<'static>,
    dst: Linear,
    src: Linear,
    count: usize,
    kind: CopyKind,
    stream: Option<*mut c_void>,
) -> HipResult {
    check_array_kind(
        kind,
        matches!(dst, Linear::Array(..)),
        matches!(src, Linear::Array(..)),
    )?;
    let copies = linear_plan(dst, src, count)?;
    // SAFETY: forwarded contract.
    unsafe { run(devices, &copies, kind, stream) }
}

/// `hipMemset3D(Async)`: `extent` (bytes, rows, slices) of `value` bytes in pitched device
/// memory whose slices are `ysize` rows apart; synchronous when `stream` is `None`.
pub fn memset_3d(
    devices: copy::Devices<'static>,
    target: &PitchedPtr,
    value: u8,
    extent: &Extent,
    stream: Option<*mut c_void>,
) -> HipResult {
    if extent.width == 0 || extent.height == 0 || extent.depth == 0 {
        return Ok(());
    }
    if target.ptr.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    if extent.width > target.pitch {
        tracing::warn!(
            ?extent,
            pitch = target.pitch,
            "hipMemset3D: rows wider than the pitch"
        );
        return Err(HipError::INVALID_VALUE);
    }
    if extent.depth > 1 && extent.height > target.ysize {
        tracing::warn!(
            ?extent,
            ysize = target.ysize,
            "hipMemset3D: slices taller than ysize"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let slice_pitch = target
        .pitch
        .checked_mul(target.ysize)
        .ok_or(HipError::INVALID_VALUE)?;
    // Slices whose rows follow each other are one fill.
    let (height, slices) = if extent.depth == 1 || extent.height == target.ysize {
        (
            extent
                .height
                .checked_mul(extent.depth)
                .ok_or(HipError::INVALID_VALUE)?,
            1,
        )
    } else {
        (extent.height, extent.depth)
    };
    for z in 0..slices {
        let dst = (target.ptr as usize)
            .checked_add(z * slice_pitch)
            .ok_or(HipError::INVALID_VALUE)? as *mut c_void;
        match stream {
            None => copy::memset_2d(devices, dst, target.pitch, value, extent.width, height)?,
            Some(s) => copy::memset_2d_async(
                devices,
                dst,
                target.pitch,
                value as u32,
                1,
                extent.width,
                height,
                s,
            )?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(ptr: usize, pitch: usize, rows: usize, pos: Pos) -> Side3D {
        Side3D {
            place: Place::Pitched { ptr, pitch, rows },
            pos,
        }
    }

    #[test]
    fn abi_structures_have_amds_sizes() {
        assert_eq!(std::mem::size_of::<Memcpy3DParms>(), 160);
        assert_eq!(std::mem::offset_of!(Memcpy3DParms, dst_array), 64);
        assert_eq!(std::mem::offset_of!(Memcpy3DParms, kind), 152);
        assert_eq!(std::mem::size_of::<Memcpy2DParams>(), 128);
        assert_eq!(std::mem::offset_of!(Memcpy2DParams, dst_x_in_bytes), 56);
        assert_eq!(std::mem::size_of::<DrvMemcpy3D>(), 184);
        assert_eq!(std::mem::offset_of!(DrvMemcpy3D, dst_x_in_bytes), 80);
        assert_eq!(std::mem::offset_of!(Memcpy3DPeerParms, dst_array), 72);
        assert_eq!(std::mem::size_of::<Memcpy3DPeerParms>(), 168);
    }

    #[test]
    fn slices_that_follow_each_other_are_one_copy() {
        let pos = Pos { x: 4, y: 1, z: 2 };
        let c = Copy3D {
            dst: memory(0x10000, 64, 8, pos),
            src: memory(0x90000, 32, 8, Pos::default()),
            extent: Extent {
                width: 16,
                height: 3,
                depth: 2,
            },
            kind: CopyKind::Default,
        };
        let plan = c.plan().unwrap();
        assert_eq!(
            plan.len(),
            2,
            "box shorter than the slices: a copy per slice"
        );
        assert_eq!(plan[0].dst, 0x10000 + 2 * 64 * 8 + 64 + 4);
        assert_eq!(plan[1].dst, plan[0].dst + 64 * 8);
        assert_eq!(plan[1].src, 0x90000 + 32 * 8);
        let full = Copy3D {
            extent: Extent {
                width: 16,
                height: 8,
                depth: 2,
            },
            dst: memory(0x10000, 64, 8, Pos::default()),
            ..c
        };
        let plan = full.plan().unwrap();
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].rows.height, 16);
    }

    #[test]
    fn pitched_sides_are_checked() {
        let c = |dst: Side3D| Copy3D {
            dst,
            src: memory(0x90000, 32, 4, Pos::default()),
            extent: Extent {
                width: 16,
                height: 2,
                depth: 2,
            },
            kind: CopyKind::Default,
        };
        let at = |x| Pos { x, y: 0, z: 0 };
        assert_eq!(
            c(memory(0x1000, 20, 4, at(8))).plan(),
            Err(HipError::INVALID_PITCH_VALUE)
        );
        assert_eq!(
            c(memory(0, 32, 4, at(0))).plan(),
            Err(HipError::INVALID_VALUE)
        );
        assert_eq!(
            c(memory(0x1000, 32, 1, at(0))).plan(),
            Err(HipError::INVALID_VALUE)
        );
    }

    #[test]
    fn driver_memory_types_are_read_in_the_abis_numbering() {
        use crate::runtime::base::compat::Abi;
        let side = |abi, t, h, d, a| driver_side(abi, t, h, d, a, 64, 0).unwrap();
        let p = |ptr| Place::Pitched {
            ptr,
            pitch: 64,
            rows: 0,
        };
        assert_eq!(side(Abi::Rocm6, 1, 0x100, 0, 0), p(0x100), "ROCm 6 host");
        assert_eq!(side(Abi::Rocm5, 1, 0, 0x200, 0), p(0x200), "ROCm 5 device");
        // A ROCm 5 device type reads the device field even when only the host one is set.
        assert_eq!(
            side(Abi::Rocm5, 1, 0x100, 0, 0),
            p(0),
            "ROCm 5 device, null"
        );
        assert_eq!(
            side(Abi::Rocm6, 2, 0x100, 0, 0),
            p(0),
            "ROCm 6 device, null"
        );
        assert_eq!(side(Abi::Rocm6, 2, 0, 0x200, 0), p(0x200), "ROCm 6 device");
        assert_eq!(
            side(Abi::Rocm5, 2, 0, 0, 0x300),
            Place::Array(0x300),
            "ROCm 5 array"
        );
        assert_eq!(
            side(Abi::Rocm6, 10, 0, 0, 0x300),
            Place::Array(0x300),
            "ROCm 6 array"
        );
        assert_eq!(
            side(Abi::Rocm7, 11, 0, 0x200, 0),
            p(0x200),
            "ROCm 7 unified"
        );
        assert_eq!(side(Abi::Rocm5, 0, 0x100, 0, 0), p(0x100), "ROCm 5 host");
        assert!(driver_side(Abi::Rocm5, 10, 0, 0, 0x300, 0, 0).is_err());
        assert!(driver_side(Abi::Rocm6, 7, 0, 0, 0, 0, 0).is_err());
    }

    #[test]
    fn a_driver_pitch_of_zero_means_packed_rows() {
        assert_eq!(packed(0, 10), 10);
        assert_eq!(packed(64, 10), 64);
    }

    #[test]
    fn array_kinds_must_not_call_an_array_host_memory() {
        assert!(check_array_kind(CopyKind::HostToDevice, true, false).is_ok());
        assert!(check_array_kind(CopyKind::HostToDevice, false, true).is_err());
        assert!(check_array_kind(CopyKind::DeviceToHost, true, false).is_err());
        assert!(check_array_kind(CopyKind::Default, true, true).is_ok());
    }
}
