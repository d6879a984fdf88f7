//! MIMG image instructions as gfx90a has them (gfx942 has none): `image_load`,
//! `image_load_mip`, `image_store`, `image_store_mip`, `image_get_resinfo` and
//! `image_sample`, the instructions HIP's texture and surface functions become there; and
//! the MUBUF formatted loads `buffer_load_format_x/xy/xyz/xyzw`, which read texels of a
//! buffer through the same formats (`tex1Dfetch` of a linear texture becomes one).
//!
//! An image is described by an 8-dword resource (T#, GFX9 layout) in SGPRs, a sampler by a
//! 4-dword S#. hsasim reads only the fields below; the rest must describe what it models
//! (a linear, single-level image), or the instruction stops the dispatch with its reason.
//!
//! T# (dword:bits): 0:31..0 base address bits 39..8; 1:7..0 base address bits 47..40;
//! 1:25..20 DATA_FORMAT; 1:29..26 NUM_FORMAT; 2:13..0 WIDTH-1; 2:27..14 HEIGHT-1;
//! 3:2..0/5..3/8..6/11..9 DST_SEL_X/Y/Z/W; 3:15..12 BASE_LEVEL; 3:19..16 LAST_LEVEL;
//! 3:24..20 SW_MODE (0, linear, only); 3:31..28 TYPE (8 1D, 9 2D, 10 3D, 12 1D array,
//! 13 2D array); 4:12..0 DEPTH-1 (3D depth, or the array's layer count - 1);
//! 4:28..13 PITCH-1 in texels (row pitch). Texel (x, y, z) of a linear image is at
//! `base + elem * (x + pitch * (y + height * z))`, z being the slice or layer.
//!
//! V# (buffer resource, for the formatted loads): 0:31..0 base address bits 31..0; 1:15..0
//! base address bits 47..32; 1:29..16 STRIDE; 2 NUM_RECORDS (elements when the stride is not
//! 0, else bytes); 3:2..0/5..3/8..6/11..9 DST_SEL_X/Y/Z/W; 3:14..12 NUM_FORMAT; 3:18..15
//! DATA_FORMAT (codes as in the T#). An element at or past NUM_RECORDS reads zeros.
//!
//! S#: 0:2..0/5..3/8..6 CLAMP_X/Y/Z (0 wrap, 1 mirror, 2 clamp to last texel, 3 mirror
//! once, 6 border); 0:11..9 MAX_ANISO_RATIO (0 only); 0:15 FORCE_UNNORMALIZED;
//! 2:21..20 XY_MAG_FILTER, 2:23..22 XY_MIN_FILTER (0 point, 1 bilinear; they must agree);
//! 2:25..24 Z_FILTER (3D images: 1 point, 2 linear, 0 none: as XY); 3:31..30 BORDER_COLOR_TYPE
//! (0 transparent black, 1 opaque black, 2 opaque white).

use super::half::{f16_to_f32, f32_to_f16};
use super::{host_read, host_write, Ctx, Step};
use crate::api::DispatchError;
use crate::inst::Inst;
use crate::wave::{Wave, LANES};

type R = crate::exec::Outcome;

/// `Inst::seg` bits of a MIMG instruction.
pub const UNORM: u16 = 1;
pub const DA: u16 = 2;
pub const A16: u16 = 4;
pub const LWE: u16 = 8;
pub const D16: u16 = 16;

pub const OP_LOAD: u16 = 0;
pub const OP_LOAD_MIP: u16 = 1;
pub const OP_STORE: u16 = 8;
pub const OP_STORE_MIP: u16 = 9;
pub const OP_GET_RESINFO: u16 = 14;
pub const OP_SAMPLE: u16 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Unorm,
    Snorm,
    Uint,
    Sint,
    Float,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    D1,
    D2,
    D3,
    Array1,
    Array2,
}

/// The parts of a T# hsasim models.
#[derive(Clone, Copy, Debug)]
struct Image {
    base: u64,
    /// Channels and bits per channel.
    chans: u32,
    bits: u32,
    num: Num,
    width: u32,
    height: u32,
    /// Depth (3D) or layer count (arrays); 1 otherwise.
    depth: u32,
    pitch: u32,
    dst_sel: [u32; 4],
    levels: u32,
    dim: Dim,
}

impl Image {
    fn elem(&self) -> u64 {
        (self.chans * self.bits / 8) as u64
    }

    /// Address components the instruction reads before the mip level / after which the
    /// array layer comes.
    fn coords(&self) -> usize {
        match self.dim {
            Dim::D1 => 1,
            Dim::D2 | Dim::Array1 => 2,
            Dim::D3 | Dim::Array2 => 3,
        }
    }

    /// Width, height and depth/layers the way the hardware indexes them: a 1D array's
    /// layer is its second coordinate.
    fn extent(&self) -> [u32; 3] {
        match self.dim {
            Dim::D1 => [self.width, 1, 1],
            Dim::D2 => [self.width, self.height, 1],
            Dim::D3 | Dim::Array2 => [self.width, self.height, self.depth],
            Dim::Array1 => [self.width, self.depth, 1],
        }
    }

    /// Memory address of texel `t` (in range).
    fn addr(&self, t: [u32; 3]) -> u64 {
        let (x, y, z) = (t[0] as u64, t[1] as u64, t[2] as u64);
        let (rows, slices) = match self.dim {
            // A 1D array's layers are rows.
            Dim::Array1 => (y, 0),
            _ => (y, z),
        };
        let h = if self.dim == Dim::Array1 {
            1
        } else {
            self.height as u64
        };
        self.base + self.elem() * (x + self.pitch as u64 * (rows + h * slices))
    }
}

fn bits(v: u32, lo: u32, n: u32) -> u32 {
    (v >> lo) & ((1u32 << n) - 1)
}

/// Channels, bits per channel and number format of a DATA_FORMAT / NUM_FORMAT pair (the
/// codes images and buffers share).
fn format(dfmt: u32, nfmt: u32) -> Result<(u32, u32, Num), String> {
    let (chans, b) = match dfmt {
        1 => (1, 8),
        2 => (1, 16),
        3 => (2, 8),
        4 => (1, 32),
        5 => (2, 16),
        10 => (4, 8),
        11 => (2, 32),
        12 => (4, 16),
        13 => (3, 32),
        14 => (4, 32),
        _ => return Err(format!("data format {dfmt} is not supported")),
    };
    let num = match nfmt {
        0 => Num::Unorm,
        1 => Num::Snorm,
        4 => Num::Uint,
        5 => Num::Sint,
        7 if b != 8 => Num::Float,
        _ => {
            return Err(format!(
                "number format {nfmt} with data format {dfmt} is not supported"
            ))
        }
    };
    Ok((chans, b, num))
}

fn parse_image(t: [u32; 8]) -> Result<Image, String> {
    let base = ((t[0] as u64) << 8) | ((bits(t[1], 0, 8) as u64) << 40);
    let (chans, b, num) = format(bits(t[1], 20, 6), bits(t[1], 26, 4))?;
    let sw_mode = bits(t[3], 20, 5);
    if sw_mode != 0 {
        return Err(format!("image swizzle mode {sw_mode} (only linear, 0)"));
    }
    let ty = bits(t[3], 28, 4);
    let dim = match ty {
        8 => Dim::D1,
        9 => Dim::D2,
        10 => Dim::D3,
        12 => Dim::Array1,
        13 => Dim::Array2,
        _ => return Err(format!("image type {ty} is not supported")),
    };
    let base_level = bits(t[3], 12, 4);
    let last_level = bits(t[3], 16, 4);
    if base_level != 0 || last_level != 0 {
        return Err(format!(
            "mip-mapped image (levels {base_level}..={last_level}): only level 0 is modelled"
        ));
    }
    let width = bits(t[2], 0, 14) + 1;
    let pitch = bits(t[4], 13, 16) + 1;
    if pitch < width {
        return Err(format!("image pitch {pitch} is below its width {width}"));
    }
    Ok(Image {
        base,
        chans,
        bits: b,
        num,
        width,
        height: bits(t[2], 14, 14) + 1,
        depth: bits(t[4], 0, 13) + 1,
        pitch,
        dst_sel: [0, 3, 6, 9].map(|s| bits(t[3], s, 3)),
        levels: last_level - base_level + 1,
        dim,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clamp {
    Wrap,
    Mirror,
    LastTexel,
    MirrorOnce,
    Border,
}

#[derive(Clone, Copy, Debug)]
struct Sampler {
    clamp: [Clamp; 3],
    unnormalized: bool,
    linear: bool,
    z_linear: bool,
    border: [f32; 4],
}

fn parse_sampler(s: [u32; 4]) -> Result<Sampler, String> {
    let clamp = |k: u32| match bits(s[0], 3 * k, 3) {
        0 => Ok(Clamp::Wrap),
        1 => Ok(Clamp::Mirror),
        2 => Ok(Clamp::LastTexel),
        3 => Ok(Clamp::MirrorOnce),
        6 => Ok(Clamp::Border),
        m => Err(format!("sampler clamp mode {m} is not supported")),
    };
    if bits(s[0], 9, 3) != 0 {
        return Err("anisotropic filtering is not supported".into());
    }
    let (mag, min) = (bits(s[2], 20, 2), bits(s[2], 22, 2));
    if mag != min || mag > 1 {
        return Err(format!(
            "sampler filters mag {mag} / min {min}: point or bilinear, the same for both"
        ));
    }
    let z = bits(s[2], 24, 2);
    if z > 2 {
        return Err(format!("sampler z filter {z} is not supported"));
    }
    let border = match bits(s[3], 30, 2) {
        0 => [0.0; 4],
        1 => [0.0, 0.0, 0.0, 1.0],
        2 => [1.0; 4],
        _ => return Err("register border colors are not supported".into()),
    };
    Ok(Sampler {
        clamp: [clamp(0)?, clamp(1)?, clamp(2)?],
        unnormalized: bits(s[0], 15, 1) != 0,
        linear: mag == 1,
        z_linear: z == 2 || (z == 0 && mag == 1),
        border,
    })
}

/// Channel `k` of the texel at `host`, as the 32-bit register value the format yields
/// (integers for uint/sint, f32 bits otherwise).
fn read_channel(img: &Image, host: u64, k: u32) -> u32 {
    let a = host + (k * img.bits / 8) as u64;
    // SAFETY (all three reads): the caller translated the whole texel with Ctx::check.
    let raw: u32 = match img.bits {
        8 => unsafe { host_read::<u8>(a) }.into(),
        16 => unsafe { host_read::<u16>(a) }.into(),
        _ => unsafe { host_read::<u32>(a) },
    };
    let max = ((1u64 << img.bits) - 1) as f32;
    let smax = ((1u64 << (img.bits - 1)) - 1) as f32;
    let sext = |r: u32| ((r << (32 - img.bits)) as i32) >> (32 - img.bits);
    match img.num {
        Num::Uint => raw,
        Num::Sint => sext(raw) as u32,
        Num::Unorm => (raw as f32 / max).to_bits(),
        Num::Snorm => (sext(raw) as f32 / smax).max(-1.0).to_bits(),
        Num::Float if img.bits == 16 => f16_to_f32(raw as u16).to_bits(),
        Num::Float => raw,
    }
}

/// The register value `v` converted to channel `k`'s storage, written at `host`.
fn write_channel(img: &Image, host: u64, k: u32, v: u32) {
    let a = host + (k * img.bits / 8) as u64;
    let max = ((1u64 << img.bits) - 1) as f32;
    let smax = ((1u64 << (img.bits - 1)) - 1) as f32;
    let f = f32::from_bits(v);
    let raw = match img.num {
        Num::Uint | Num::Sint => v,
        Num::Unorm => (f.clamp(0.0, 1.0) * max).round_ties_even() as u32,
        Num::Snorm => (f.clamp(-1.0, 1.0) * smax).round_ties_even() as i32 as u32,
        Num::Float if img.bits == 16 => f32_to_f16(f) as u32,
        Num::Float => v,
    };
    // SAFETY (all three writes): the caller translated the whole texel with Ctx::check
    // for writing.
    match img.bits {
        8 => unsafe { host_write::<u8>(a, raw as u8) },
        16 => unsafe { host_write::<u16>(a, raw as u16) },
        _ => unsafe { host_write::<u32>(a, raw) },
    }
}

/// The value a format gives a channel it lacks (0, and 1 for alpha) or DST_SEL's 1.
fn one(img: &Image) -> u32 {
    match img.num {
        Num::Uint | Num::Sint => 1,
        _ => 1.0f32.to_bits(),
    }
}

/// The four components of texel `t` (in range) before DST_SEL.
fn fetch(w: &Wave, i: &Inst, c: &Ctx, img: &Image, t: [u32; 3]) -> Result<[u32; 4], DispatchError> {
    let addr = img.addr(t);
    let host = c.check(w, i, addr, img.elem(), false)?;
    let mut v = [0, 0, 0, one(img)];
    for (k, slot) in v.iter_mut().enumerate().take(img.chans as usize) {
        *slot = read_channel(img, host, k as u32);
    }
    Ok(v)
}

fn swizzle(img: &Image, v: [u32; 4]) -> [u32; 4] {
    img.dst_sel.map(|s| match s {
        0 => 0,
        1 => one(img),
        4..=7 => v[s as usize - 4],
        _ => 0,
    })
}

fn rsrc(w: &Wave, code: u16) -> [u32; 8] {
    std::array::from_fn(|k| w.s[(code as usize + k) & 127])
}

fn samp(w: &Wave, code: u16) -> [u32; 4] {
    std::array::from_fn(|k| w.s[(code as usize + k) & 127])
}

/// Writes the components `dmask` selects, in order, to consecutive registers from `dst`.
fn write_result(w: &mut Wave, i: &Inst, lane: usize, v: [u32; 4]) {
    let dst = i.dst as usize - 256;
    let mut r = 0;
    for (k, x) in v.iter().enumerate() {
        if i.imm >> k & 1 != 0 {
            w.set_vlane(dst + r, lane, *x);
            r += 1;
        }
    }
}

/// The lanes under EXEC, read once (handlers write registers while they iterate).
fn lanes(w: &Wave) -> impl Iterator<Item = usize> {
    let exec = w.exec();
    (0..LANES).filter(move |l| exec >> l & 1 != 0)
}

fn check_modifiers(i: &Inst, c: &Ctx) -> Result<(), DispatchError> {
    for (bit, name) in [(A16, "a16"), (D16, "d16"), (LWE, "lwe")] {
        if i.seg & bit != 0 {
            return Err(c.illegal(format!(
                "{}: the {name} modifier is not supported",
                i.info.name
            )));
        }
    }
    Ok(())
}

/// `image_load`, `image_load_mip`, `image_store`, `image_store_mip`: integer texel
/// coordinates; a texel outside the image reads zeros and drops writes.
pub fn image_access(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    check_modifiers(i, c)?;
    let img =
        parse_image(rsrc(w, i.saddr)).map_err(|e| c.illegal(format!("{}: {e}", i.info.name)))?;
    let mip = matches!(i.op, OP_LOAD_MIP | OP_STORE_MIP);
    let store = matches!(i.op, OP_STORE | OP_STORE_MIP);
    let va = i.src[0] as usize - 256;
    let n = img.coords();
    let ext = img.extent();
    for lane in lanes(w) {
        let mut t = [0u32; 3];
        for (k, slot) in t.iter_mut().enumerate().take(n) {
            *slot = w.vlane(va + k, lane);
        }
        if mip && w.vlane(va + n, lane) != 0 {
            return Err(Box::new(c.illegal(format!(
                "{}: mip level {} (only level 0 is modelled)",
                i.info.name,
                w.vlane(va + n, lane)
            ))));
        }
        let inside = (0..3).all(|k| t[k] < ext[k]);
        if store {
            if !inside {
                continue;
            }
            let addr = img.addr(t);
            let host = c.check(w, i, addr, img.elem(), true)?;
            let data = i.src[1] as usize - 256;
            let mut r = 0;
            for k in 0..4u32 {
                if i.imm >> k & 1 != 0 {
                    if k < img.chans {
                        write_channel(&img, host, k, w.vlane(data + r, lane));
                    }
                    r += 1;
                } else if k < img.chans {
                    write_channel(&img, host, k, 0);
                }
            }
        } else {
            let v = if inside {
                swizzle(&img, fetch(w, i, c, &img, t)?)
            } else {
                [0; 4]
            };
            write_result(w, i, lane, v);
        }
    }
    Ok(Step::Continue)
}

/// `image_get_resinfo`: width, height, depth or layers, and the level count, of the mip
/// level in the address register.
pub fn image_get_resinfo(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    check_modifiers(i, c)?;
    let img =
        parse_image(rsrc(w, i.saddr)).map_err(|e| c.illegal(format!("{}: {e}", i.info.name)))?;
    let va = i.src[0] as usize - 256;
    for lane in lanes(w) {
        let level = w.vlane(va, lane);
        let v = if level >= img.levels {
            [0; 4]
        } else {
            let m = |x: u32| (x >> level).max(1);
            let [x, y, z] = match img.dim {
                Dim::D1 => [m(img.width), 0, 0],
                Dim::D2 => [m(img.width), m(img.height), 0],
                Dim::D3 => [m(img.width), m(img.height), m(img.depth)],
                Dim::Array1 => [m(img.width), img.depth, 0],
                Dim::Array2 => [m(img.width), m(img.height), img.depth],
            };
            [x, y, z, img.levels]
        };
        write_result(w, i, lane, v);
    }
    Ok(Step::Continue)
}

/// Texel index `i` of an axis of `n` texels under clamp mode `m`; `None`: the border.
fn address(m: Clamp, i: i64, n: u32) -> Option<u32> {
    let n = n as i64;
    let r = match m {
        Clamp::Wrap => i.rem_euclid(n),
        Clamp::Mirror => {
            let k = i.rem_euclid(2 * n);
            if k >= n {
                2 * n - 1 - k
            } else {
                k
            }
        }
        Clamp::LastTexel => i.clamp(0, n - 1),
        Clamp::MirrorOnce => (if i < 0 { -i - 1 } else { i }).min(n - 1),
        Clamp::Border if (0..n).contains(&i) => i,
        Clamp::Border => return None,
    };
    Some(r as u32)
}

/// Bilinear weights keep 8 fractional bits, as texture units do.
fn weight(f: f32) -> f32 {
    (f * 256.0).round() / 256.0
}

/// `image_sample` at level 0 (only single-level images are modelled, so the implicit LOD
/// does not matter): point or (bi/tri)linear filtering, each axis under its clamp mode.
pub fn image_sample(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    check_modifiers(i, c)?;
    let img =
        parse_image(rsrc(w, i.saddr)).map_err(|e| c.illegal(format!("{}: {e}", i.info.name)))?;
    let smp =
        parse_sampler(samp(w, i.imm2)).map_err(|e| c.illegal(format!("{}: {e}", i.info.name)))?;
    let int = matches!(img.num, Num::Uint | Num::Sint);
    if int && smp.linear {
        return Err(Box::new(c.illegal(format!(
            "{}: linear filtering of an integer format",
            i.info.name
        ))));
    }
    let unnorm = smp.unnormalized || i.seg & UNORM != 0;
    let va = i.src[0] as usize - 256;
    let ext = img.extent();
    // Axes that are filtered and addressed; an array's layer is picked, never filtered.
    let (axes, layer_axis) = match img.dim {
        Dim::D1 => (1, None),
        Dim::D2 => (2, None),
        Dim::D3 => (3, None),
        Dim::Array1 => (1, Some(1)),
        Dim::Array2 => (2, Some(2)),
    };
    let border: [u32; 4] = if int {
        smp.border.map(|x| x as u32)
    } else {
        smp.border.map(f32::to_bits)
    };
    for lane in lanes(w) {
        // Per axis: the two texels and the weight of the second (0 under point filtering).
        let mut taps = [[(Some(0u32), Some(0u32), 0.0f32); 1]; 3];
        for k in 0..3 {
            if k >= axes {
                continue;
            }
            let mut u = f32::from_bits(w.vlane(va + k, lane));
            if !unnorm {
                u *= ext[k] as f32;
            }
            let linear = if k == 2 { smp.z_linear } else { smp.linear };
            taps[k][0] = if linear {
                let p = u - 0.5;
                let i0 = p.floor();
                let f = weight(p - i0);
                let i0 = i0 as i64;
                (
                    address(smp.clamp[k], i0, ext[k]),
                    address(smp.clamp[k], i0 + 1, ext[k]),
                    f,
                )
            } else {
                let t = address(smp.clamp[k], u.floor() as i64, ext[k]);
                (t, t, 0.0)
            };
        }
        let mut fixed = [0u32; 3];
        if let Some(a) = layer_axis {
            let l = f32::from_bits(w.vlane(va + a, lane)).round_ties_even();
            fixed[a] = (l.max(0.0) as u32).min(ext[a] - 1);
        }
        let mut out = [0f32; 4];
        let mut out_int = [0u32; 4];
        for corner in 0..8u32 {
            let mut wt = 1.0f32;
            let mut t = fixed;
            let mut border_hit = false;
            let mut skip = false;
            for k in 0..axes {
                let (a, b, f) = taps[k][0];
                let hi = corner >> k & 1 != 0;
                let cw = if hi { f } else { 1.0 - f };
                if cw == 0.0 {
                    skip = true;
                    break;
                }
                wt *= cw;
                match if hi { b } else { a } {
                    Some(x) => t[k] = x,
                    None => border_hit = true,
                }
            }
            if skip || (corner >> axes) != 0 {
                continue;
            }
            let v = if border_hit {
                border
            } else {
                fetch(w, i, c, &img, t)?
            };
            if int {
                out_int = v;
            } else {
                for k in 0..4 {
                    out[k] += wt * f32::from_bits(v[k]);
                }
            }
        }
        let v = if int { out_int } else { out.map(f32::to_bits) };
        write_result(w, i, lane, swizzle(&img, v));
    }
    Ok(Step::Continue)
}

/// `buffer_load_format_x/xy/xyz/xyzw` (MUBUF 0..3): per lane, the element at `base +
/// soffset + offset + voffset + index * stride` (index and voffset from the address VGPRs
/// as `idxen` and `offen` say) converted from the V#'s format like an image texel, swizzled
/// by its DST_SEL, first 1..4 components to the destination. Out-of-range elements read
/// zeros (then swizzled: DST_SEL's constant one stays one).
pub fn buffer_load_format(w: &mut Wave, i: &Inst, c: &mut Ctx) -> R {
    let v: [u32; 4] = std::array::from_fn(|k| w.s[(i.saddr as usize + k) & 127]);
    let base = v[0] as u64 | (bits(v[1], 0, 16) as u64) << 32;
    let stride = bits(v[1], 16, 14) as u64;
    let records = v[2] as u64;
    let (chans, b, num) = format(bits(v[3], 15, 4), bits(v[3], 12, 3))
        .map_err(|e| c.illegal(format!("{}: {e}", i.info.name)))?;
    let img = Image {
        base,
        chans,
        bits: b,
        num,
        width: 1,
        height: 1,
        depth: 1,
        pitch: 1,
        dst_sel: [0, 3, 6, 9].map(|s| bits(v[3], s, 3)),
        levels: 1,
        dim: Dim::D1,
    };
    if i.mflags & (1 << 4) != 0 {
        return Err(Box::new(c.illegal(format!(
            "{}: loads to LDS are not supported",
            i.info.name
        ))));
    }
    let soffset = w.sread32(i.imm2, 0, i.info.fk) as u64;
    let offen = i.mflags & (1 << 6) != 0;
    let idxen = i.mflags & (1 << 7) != 0;
    let va = (i.src[0] as usize).wrapping_sub(256);
    let dst = i.dst as usize - 256;
    let count = i.op as usize + 1;
    for lane in lanes(w) {
        let (index, voffset) = match (idxen, offen) {
            (true, true) => (w.vlane(va, lane), w.vlane(va + 1, lane)),
            (true, false) => (w.vlane(va, lane), 0),
            (false, true) => (0, w.vlane(va, lane)),
            (false, false) => (0, 0),
        };
        let offset = soffset + i.imm as u64 + voffset as u64;
        let inside = if stride != 0 {
            (index as u64) < records
        } else {
            offset + img.elem() <= records
        };
        let raw = if inside {
            let addr = base
                .wrapping_add(offset)
                .wrapping_add(index as u64 * stride);
            let host = c.check(w, i, addr, img.elem(), false)?;
            let mut t = [0, 0, 0, one(&img)];
            for (k, slot) in t.iter_mut().enumerate().take(chans as usize) {
                *slot = read_channel(&img, host, k as u32);
            }
            t
        } else {
            [0; 4]
        };
        let out = swizzle(&img, raw);
        for (r, x) in out.iter().take(count).enumerate() {
            w.set_vlane(dst + r, lane, *x);
        }
    }
    Ok(Step::Continue)
}
