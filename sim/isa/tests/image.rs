//! gfx90a's MIMG image instructions (`exec::image`): each test fills an image resource
//! (T#) and sampler (S#) the way the module documents them, runs one image instruction in
//! a hand-made kernel over 64 lanes, and checks every lane against a host reference.

// Lanes and components index several parallel arrays (got, want, addr) in these checks.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use hsasim_isa::decode::decode;
use hsasim_isa::{run_dispatch, ExecConfig, GfxModel};

const LOAD: u32 = 0;
const LOAD_MIP: u32 = 1;
const STORE: u32 = 8;
const RESINFO: u32 = 14;
const SAMPLE: u32 = 32;

/// T# types.
const T1D: u32 = 8;
const T2D: u32 = 9;
const T3D: u32 = 10;
const T1DA: u32 = 12;
const T2DA: u32 = 13;

/// DST_SEL X, Y, Z, W in order.
const IDENTITY: [u32; 4] = [4, 5, 6, 7];

/// An image resource (T#, GFX9 layout) for a linear single-level image.
#[allow(clippy::too_many_arguments)]
fn t_sharp(
    base: u64,
    dfmt: u32,
    nfmt: u32,
    ty: u32,
    size: [u32; 3],
    pitch: u32,
    dst_sel: [u32; 4],
) -> [u32; 8] {
    assert_eq!(base & 0xff, 0, "image base must be 256-byte aligned");
    let mut t = [0u32; 8];
    t[0] = (base >> 8) as u32;
    t[1] = ((base >> 40) as u32 & 0xff) | dfmt << 20 | nfmt << 26;
    t[2] = (size[0] - 1) | (size[1] - 1) << 14;
    t[3] = dst_sel[0] | dst_sel[1] << 3 | dst_sel[2] << 6 | dst_sel[3] << 9 | ty << 28;
    t[4] = (size[2] - 1) | (pitch - 1) << 13;
    t
}

/// A sampler (S#): clamp mode for x, y, z; bilinear or point; unnormalized coordinates;
/// border color type.
fn s_sharp(clamp: u32, linear: bool, unnormalized: bool, border: u32) -> [u32; 4] {
    let f = u32::from(linear);
    [
        clamp | clamp << 3 | clamp << 6 | u32::from(unnormalized) << 15,
        0,
        f << 20 | f << 22 | (f + 1) << 24,
        border << 30,
    ]
}

fn image_word(op: u32, dmask: u32, unorm: bool) -> [u32; 2] {
    [
        0xf000_0000 | op << 18 | dmask << 8 | u32::from(unorm) << 12,
        // vaddr v4, vdata v[8:11], T# s[8:15], S# s[16:19]
        4 | 8 << 8 | 2 << 16 | 4 << 21,
    ]
}

/// Runs `image` with per-lane address dwords `addr[lane]` in v[4:7] and `data[lane]` in
/// v[8:11]; returns v[8:11] of every lane.
fn run(
    image: [u32; 2],
    desc: &[u32; 16],
    addr: &[[u32; 4]; 64],
    data: &[[u32; 4]; 64],
    mem: &Ranges,
) -> Vec<[u32; 4]> {
    let out = vec![[0u32; 4]; 64];
    mem.add_slice(desc);
    mem.add_slice(addr);
    mem.add_slice(data);
    mem.add_slice(&out);
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    let p = |x: &[[u32; 4]]| x.as_ptr() as u64;
    let d = desc.as_ptr() as u64;
    let code = vec![
        0xbe80_00ff,
        lo(p(addr)),
        0xbe81_00ff,
        hi(p(addr)),
        0xbe82_00ff,
        lo(p(&out)),
        0xbe83_00ff,
        hi(p(&out)),
        0xbe84_00ff,
        lo(d),
        0xbe85_00ff,
        hi(d),
        0xbe86_00ff,
        lo(p(data)),
        0xbe87_00ff,
        hi(p(data)),
        0xc00e_0202,
        0, // s_load_dwordx8 s[8:15], s[4:5], 0
        0xc00a_0402,
        0x30,        // s_load_dwordx4 s[16:19], s[4:5], 0x30
        0x2402_0084, // v_lshlrev_b32 v1, 4, v0
        0xdc5c_8000,
        0x0400_0001, // global_load_dwordx4 v[4:7], v1, s[0:1]
        0xdc5c_8000,
        0x0806_0001, // global_load_dwordx4 v[8:11], v1, s[6:7]
        0xbf8c_0070, // s_waitcnt vmcnt(0) lgkmcnt(0)
        image[0],
        image[1],
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0xdc7c_8000,
        0x0002_0801, // global_store_dwordx4 v1, v[8:11], s[2:3]
        0xbf81_0000, // s_endpgm
    ];
    let (mut buf, kd) = handmade_kernel();
    code_words(&mut buf, &code);
    mem.add(kd, 256 + 4 * code.len() as u64);
    let (disp, _p) = packet(GfxModel::Gfx90a, kd, 0, [64, 1, 1], [64, 1, 1], 0, mem);
    run_dispatch(&disp, mem, &ExecConfig::BASE).unwrap();
    // SAFETY: the dispatch has finished; `out` was written through its address.
    (0..64)
        .map(|l| unsafe { std::ptr::read_volatile(&out[l]) })
        .collect()
}

fn desc(t: [u32; 8], s: [u32; 4]) -> [u32; 16] {
    let mut d = [0u32; 16];
    d[..8].copy_from_slice(&t);
    d[12..].copy_from_slice(&s);
    d
}

/// Deterministic bytes.
fn pattern(n: usize, seed: u32) -> Aligned {
    let mut a = Aligned::new(n.max(256), 256);
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    for b in a.bytes().iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    a
}

#[derive(Clone, Copy, Debug)]
struct Fmt {
    dfmt: u32,
    nfmt: u32,
    chans: usize,
    bits: usize,
}

const UNORM: u32 = 0;
const SNORM: u32 = 1;
const UINT: u32 = 4;
const SINT: u32 = 5;
const FLOAT: u32 = 7;

/// The formats HIP arrays use: 8/16/32-bit int, unorm/snorm (8/16), float (16/32); 1, 2, 4
/// channels.
fn formats() -> Vec<Fmt> {
    let mut v = Vec::new();
    for (bits, dfmts) in [(8, [1, 3, 10]), (16, [2, 5, 12]), (32, [4, 11, 14])] {
        for (chans, dfmt) in [1, 2, 4].into_iter().zip(dfmts) {
            let nfmts: &[u32] = match bits {
                8 => &[UNORM, SNORM, UINT, SINT],
                16 => &[UNORM, SNORM, UINT, SINT, FLOAT],
                _ => &[UINT, SINT, FLOAT],
            };
            for &nfmt in nfmts {
                v.push(Fmt {
                    dfmt,
                    nfmt,
                    chans,
                    bits,
                });
            }
        }
    }
    v
}

fn f16(h: u16) -> f32 {
    let s = if h >> 15 != 0 { -1.0f32 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = (h & 0x3ff) as f32;
    match e {
        0 => s * m * 2f32.powi(-24),
        31 if m == 0.0 => s * f32::INFINITY,
        31 => f32::NAN,
        _ => s * (1.0 + m / 1024.0) * 2f32.powi(e as i32 - 15),
    }
}

/// Host reference: the register values of the texel at byte `off` of `img`.
fn texel(img: &[u8], off: usize, f: Fmt) -> [u32; 4] {
    let one = if matches!(f.nfmt, UINT | SINT) {
        1
    } else {
        1.0f32.to_bits()
    };
    let mut v = [0, 0, 0, one];
    for (k, slot) in v.iter_mut().enumerate().take(f.chans) {
        let at = off + k * f.bits / 8;
        let raw = match f.bits {
            8 => img[at] as u32,
            16 => u16::from_le_bytes([img[at], img[at + 1]]) as u32,
            _ => u32::from_le_bytes(img[at..at + 4].try_into().unwrap()),
        };
        let signed = ((raw << (32 - f.bits)) as i32) >> (32 - f.bits);
        let max = ((1u64 << f.bits) - 1) as f32;
        let smax = ((1u64 << (f.bits - 1)) - 1) as f32;
        *slot = match f.nfmt {
            UINT => raw,
            SINT => signed as u32,
            UNORM => (raw as f32 / max).to_bits(),
            SNORM => (signed as f32 / smax).max(-1.0).to_bits(),
            _ if f.bits == 16 => f16(raw as u16).to_bits(),
            _ => raw,
        };
    }
    v
}

fn same(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

/// Every lane's four components against `want(lane)`; `at(lane)` names the lane's coordinate
/// in the failure message.
fn check_lanes(
    f: Fmt,
    got: &[[u32; 4]],
    want: impl Fn(usize) -> [u32; 4],
    at: impl Fn(usize) -> String,
) {
    for (l, g) in got.iter().enumerate() {
        let want = want(l);
        for k in 0..4 {
            assert!(
                same(g[k], want[k]),
                "{f:?} lane {l} {} component {k}: {:#x} want {:#x}",
                at(l),
                g[k],
                want[k]
            );
        }
    }
}

#[test]
fn image_load_reads_every_format_in_2d_with_zeros_outside() {
    let (w, h, pitch) = (5u32, 3u32, 7u32);
    for (n, f) in formats().into_iter().enumerate() {
        let elem = f.chans * f.bits / 8;
        let mut img = pattern(elem * (pitch * h) as usize, n as u32);
        let mem = Ranges::default();
        mem.add(img.addr(), (elem * (pitch * h) as usize) as u64);
        let t = t_sharp(img.addr(), f.dfmt, f.nfmt, T2D, [w, h, 1], pitch, IDENTITY);
        let d = desc(t, [0; 4]);
        let addr: [[u32; 4]; 64] = std::array::from_fn(|l| [l as u32 % 7, l as u32 / 7 % 4, 0, 0]);
        let data = [[0xdead_beef; 4]; 64];
        let got = run(image_word(LOAD, 0xf, true), &d, &addr, &data, &mem);
        let bytes = img.bytes().to_vec();
        check_lanes(
            f,
            &got,
            |l| {
                let [x, y, ..] = addr[l];
                if x < w && y < h {
                    texel(&bytes, elem * (x + pitch * y) as usize, f)
                } else {
                    [0; 4]
                }
            },
            |l| format!("({},{})", addr[l][0], addr[l][1]),
        );
    }
}

#[test]
fn dmask_packs_and_dst_sel_swizzles() {
    let f = Fmt {
        dfmt: 10,
        nfmt: UINT,
        chans: 4,
        bits: 8,
    };
    let mut img = pattern(4 * 16, 7);
    let mem = Ranges::default();
    mem.add(img.addr(), 64);
    // x <- W, y <- Z, z <- 1, w <- 0
    let t = t_sharp(
        img.addr(),
        f.dfmt,
        f.nfmt,
        T1D,
        [16, 1, 1],
        16,
        [7, 6, 1, 0],
    );
    let d = desc(t, [0; 4]);
    let addr: [[u32; 4]; 64] = std::array::from_fn(|l| [l as u32 % 16, 0, 0, 0]);
    let data = [[0xdead_beef; 4]; 64];
    let bytes = img.bytes().to_vec();
    for dmask in 1..16u32 {
        let got = run(image_word(LOAD, dmask, true), &d, &addr, &data, &mem);
        for l in 0..64 {
            let tx = texel(&bytes, 4 * (l % 16), f);
            let sw = [tx[3], tx[2], 1, 0];
            let mut want = [0xdead_beef; 4];
            let mut r = 0;
            for k in 0..4 {
                if dmask >> k & 1 != 0 {
                    want[r] = sw[k];
                    r += 1;
                }
            }
            assert_eq!(got[l], want, "dmask {dmask:#x} lane {l}");
        }
    }
}

#[test]
fn image_load_addresses_1d_3d_and_arrays() {
    let (w, h, d3, pitch) = (4u32, 3u32, 2u32, 5u32);
    for ty in [T1D, T2D, T3D, T1DA, T2DA] {
        let n = (pitch * h * d3) as usize;
        let mut img = pattern(4 * n, ty);
        let mem = Ranges::default();
        mem.add(img.addr(), 4 * n as u64);
        let size = match ty {
            T1DA => [w, 1, h],
            _ => [w, h, d3],
        };
        let t = t_sharp(img.addr(), 4, UINT, ty, size, pitch, IDENTITY);
        let dsc = desc(t, [0; 4]);
        let addr: [[u32; 4]; 64] =
            std::array::from_fn(|l| [l as u32 % 5, l as u32 / 5 % 4, l as u32 / 20 % 3, 0]);
        let data = [[7; 4]; 64];
        // The mip level follows the coordinates: 0 in lanes' fourth dword, so 3-coordinate
        // types use image_load_mip.
        let op = if matches!(ty, T3D | T2DA) {
            LOAD_MIP
        } else {
            LOAD
        };
        let got = run(image_word(op, 1, true), &dsc, &addr, &data, &mem);
        let words: Vec<u32> = img
            .bytes()
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for l in 0..64 {
            let [x, y, z, _] = addr[l];
            let want = match ty {
                T1D => (x < w).then_some(x as usize),
                T2D => (x < w && y < h).then(|| (x + pitch * y) as usize),
                T3D | T2DA => {
                    (x < w && y < h && z < d3).then(|| (x + pitch * (y + h * z)) as usize)
                }
                _ => (x < w && y < h).then(|| (x + pitch * y) as usize),
            };
            let want = want.map_or(0, |i| words[i]);
            assert_eq!(got[l][0], want, "type {ty} lane {l} ({x},{y},{z})");
        }
    }
}

#[test]
fn image_store_converts_and_drops_outside_writes() {
    let (w, h, pitch) = (4u32, 4u32, 6u32);
    for f in [
        Fmt {
            dfmt: 10,
            nfmt: UNORM,
            chans: 4,
            bits: 8,
        },
        Fmt {
            dfmt: 5,
            nfmt: SNORM,
            chans: 2,
            bits: 16,
        },
        Fmt {
            dfmt: 12,
            nfmt: FLOAT,
            chans: 4,
            bits: 16,
        },
        Fmt {
            dfmt: 11,
            nfmt: SINT,
            chans: 2,
            bits: 32,
        },
    ] {
        let elem = f.chans * f.bits / 8;
        let size = elem * (pitch * h) as usize;
        let mut img = Aligned::new(size.max(256), 256);
        let mem = Ranges::default();
        mem.add(img.addr(), size as u64);
        let t = t_sharp(img.addr(), f.dfmt, f.nfmt, T2D, [w, h, 1], pitch, IDENTITY);
        let d = desc(t, [0; 4]);
        // Lanes 0..16 write each texel once; the others write outside.
        let addr: [[u32; 4]; 64] = std::array::from_fn(|l| {
            if l < 16 {
                [l as u32 % 4, l as u32 / 4, 0, 0]
            } else {
                [l as u32 % 7 + 4, l as u32 % 5, 0, 0]
            }
        });
        let int = f.nfmt == SINT;
        let val = |l: usize, k: usize| -> u32 {
            let x = l as f32 * 0.0625 - 0.4 + k as f32 * 0.125;
            if int {
                (l as i32 * 1000 - 7000 + k as i32) as u32
            } else {
                x.to_bits()
            }
        };
        let data: [[u32; 4]; 64] = std::array::from_fn(|l| std::array::from_fn(|k| val(l, k)));
        run(image_word(STORE, 0xf, true), &d, &addr, &data, &mem);
        let bytes = img.bytes().to_vec();
        for l in 0..16 {
            let [x, y, ..] = addr[l];
            let got = texel(&bytes, elem * (x + pitch * y) as usize, f);
            for k in 0..f.chans {
                let v = f32::from_bits(val(l, k));
                if f.nfmt == FLOAT {
                    let g = f32::from_bits(got[k]);
                    assert!(
                        (g - v).abs() <= 1e-3,
                        "{f:?} lane {l} comp {k}: {g} want {v}"
                    );
                    continue;
                }
                let want = match f.nfmt {
                    UNORM => ((v.clamp(0.0, 1.0) * 255.0).round_ties_even() / 255.0).to_bits(),
                    SNORM => ((v.clamp(-1.0, 1.0) * 32767.0).round_ties_even() / 32767.0).to_bits(),
                    _ => val(l, k),
                };
                assert_eq!(got[k], want, "{f:?} lane {l} comp {k}");
            }
        }
        // Bytes between rows (the pitch padding) stay as they were.
        for y in 0..h as usize {
            let row_end = elem * (y * pitch as usize + w as usize);
            let next = elem * ((y + 1) * pitch as usize);
            assert!(
                bytes[row_end..next.min(size)].iter().all(|&b| b == 0),
                "{f:?} row {y}"
            );
        }
    }
}

#[test]
fn get_resinfo_reports_the_size() {
    let img = Aligned::new(256, 256);
    let mem = Ranges::default();
    for (ty, size, want) in [
        (T1D, [9, 1, 1], [9, 0, 0, 1]),
        (T2D, [9, 5, 1], [9, 5, 0, 1]),
        (T3D, [9, 5, 3], [9, 5, 3, 1]),
        (T1DA, [9, 1, 4], [9, 4, 0, 1]),
        (T2DA, [9, 5, 4], [9, 5, 4, 1]),
    ] {
        let t = t_sharp(img.addr(), 4, FLOAT, ty, size, 9, IDENTITY);
        let d = desc(t, [0; 4]);
        let addr = [[0u32; 4]; 64];
        let got = run(
            image_word(RESINFO, 0xf, false),
            &d,
            &addr,
            &[[1; 4]; 64],
            &mem,
        );
        assert!(got.iter().all(|g| *g == want), "type {ty}: {:?}", got[0]);
    }
}

/// Host reference of one axis: texel index under a clamp mode, None for the border.
fn wrap(mode: u32, i: i64, n: i64) -> Option<i64> {
    match mode {
        0 => Some(i.rem_euclid(n)),
        1 => {
            let k = i.rem_euclid(2 * n);
            Some(if k < n { k } else { 2 * n - 1 - k })
        }
        2 => Some(i.clamp(0, n - 1)),
        3 => Some(if i < 0 { -i - 1 } else { i }.min(n - 1)),
        _ => (0..n).contains(&i).then_some(i),
    }
}

#[test]
fn image_sample_filters_and_addresses_2d_float() {
    let (w, h) = (4i64, 3i64);
    let vals: Vec<f32> = (0..w * h)
        .map(|k| (k * k % 17) as f32 * 0.25 - 1.0)
        .collect();
    let mut img = Aligned::new(256, 256);
    for (k, v) in vals.iter().enumerate() {
        img.bytes()[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    let mem = Ranges::default();
    mem.add(img.addr(), 4 * vals.len() as u64);
    let t = t_sharp(
        img.addr(),
        4,
        FLOAT,
        T2D,
        [w as u32, h as u32, 1],
        w as u32,
        IDENTITY,
    );
    let at = |x: Option<i64>, y: Option<i64>, border: f32| match (x, y) {
        (Some(x), Some(y)) => vals[(x + w * y) as usize],
        _ => border,
    };
    for clamp in [0u32, 1, 2, 3, 6] {
        for linear in [false, true] {
            for unnormalized in [false, true] {
                let border = 2; // opaque white
                let s = s_sharp(clamp, linear, unnormalized, border);
                let d = desc(t, s);
                // Coordinates from well left of the image to well right of it.
                let addr: [[u32; 4]; 64] = std::array::from_fn(|l| {
                    let u = l as f32 * 0.37 - 6.1;
                    let v = (l as f32 * 0.23).sin() * 5.0;
                    if unnormalized {
                        [u.to_bits(), v.to_bits(), 0, 0]
                    } else {
                        [(u / w as f32).to_bits(), (v / h as f32).to_bits(), 0, 0]
                    }
                });
                let got = run(image_word(SAMPLE, 1, false), &d, &addr, &[[0; 4]; 64], &mem);
                for l in 0..64 {
                    let mut u = f32::from_bits(addr[l][0]);
                    let mut v = f32::from_bits(addr[l][1]);
                    if !unnormalized {
                        u *= w as f32;
                        v *= h as f32;
                    }
                    let want = if linear {
                        let (pu, pv) = (u - 0.5, v - 0.5);
                        let (iu, iv) = (pu.floor(), pv.floor());
                        let q = |f: f32| (f * 256.0).round() / 256.0;
                        let (fu, fv) = (q(pu - iu), q(pv - iv));
                        let (iu, iv) = (iu as i64, iv as i64);
                        let mut acc = 0.0f32;
                        for (dy, wy) in [(0, 1.0 - fv), (1, fv)] {
                            for (dx, wx) in [(0, 1.0 - fu), (1, fu)] {
                                if wx * wy != 0.0 {
                                    acc += wx
                                        * wy
                                        * at(wrap(clamp, iu + dx, w), wrap(clamp, iv + dy, h), 1.0);
                                }
                            }
                        }
                        acc
                    } else {
                        at(
                            wrap(clamp, u.floor() as i64, w),
                            wrap(clamp, v.floor() as i64, h),
                            1.0,
                        )
                    };
                    let g = f32::from_bits(got[l][0]);
                    assert!(
                        (g - want).abs() <= 1e-5,
                        "clamp {clamp} linear {linear} unnorm {unnormalized} lane {l} ({u},{v}): {g} want {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn image_sample_normalizes_unorm8_and_picks_the_layer() {
    // A 2D array of 2 layers of 2x2 RGBA8 unorm texels; sample the center of each texel.
    let mut img = pattern(4 * 8, 3);
    let mem = Ranges::default();
    mem.add(img.addr(), 32);
    let f = Fmt {
        dfmt: 10,
        nfmt: UNORM,
        chans: 4,
        bits: 8,
    };
    let t = t_sharp(img.addr(), f.dfmt, f.nfmt, T2DA, [2, 2, 2], 2, IDENTITY);
    let d = desc(t, s_sharp(2, false, true, 0));
    let addr: [[u32; 4]; 64] = std::array::from_fn(|l| {
        let (x, y, z) = (l % 2, l / 2 % 2, l / 4 % 4);
        [
            (x as f32 + 0.5).to_bits(),
            (y as f32 + 0.5).to_bits(),
            (z as f32).to_bits(),
            0,
        ]
    });
    let got = run(
        image_word(SAMPLE, 0xf, false),
        &d,
        &addr,
        &[[0; 4]; 64],
        &mem,
    );
    let bytes = img.bytes().to_vec();
    for l in 0..64 {
        let (x, y, z) = (l % 2, l / 2 % 2, (l / 4 % 4).min(1));
        assert_eq!(
            got[l],
            texel(&bytes, 4 * (x + 2 * y + 4 * z), f),
            "lane {l}"
        );
    }
}

#[test]
fn unsupported_parts_stop_with_their_name() {
    // gfx942 has no image instructions.
    let e = decode(GfxModel::Gfx942, &[0xf000_1100, 0]).err().unwrap();
    assert!(
        e.detail.contains("MIMG") && e.detail.contains("gfx942"),
        "{}",
        e.detail
    );
    // A mip-mapped image, a tiled image and an unknown format fail by name.
    let img = Aligned::new(256, 256);
    for (patch, what) in [
        ((3, 1 << 16), "mip"),
        ((3, 1 << 20), "swizzle mode"),
        ((1, 2 << 20), "data format 6"),
    ] {
        let mut t = t_sharp(img.addr(), 4, UINT, T2D, [4, 4, 1], 4, IDENTITY);
        t[patch.0] |= patch.1;
        let mem = Ranges::default();
        let d = desc(t, [0; 4]);
        let res = std::panic::catch_unwind(|| {
            run(
                image_word(LOAD, 1, true),
                &d,
                &[[0; 4]; 64],
                &[[0; 4]; 64],
                &mem,
            )
        });
        let msg = res
            .err()
            .and_then(|p| p.downcast::<String>().ok())
            .map(|s| *s)
            .unwrap_or_default();
        assert!(msg.contains(what), "{what}: {msg}");
    }
}

#[test]
fn disassembles_as_llvm_objdump() {
    for (words, text) in [
        (
            [0xf080_0f00, 0x0061_0202],
            "image_sample v[2:5], v2, s[4:11], s[12:15] dmask:0xf",
        ),
        (
            [0xf080_4100, 0x0061_0102],
            "image_sample v1, v2, s[4:11], s[12:15] dmask:0x1 da",
        ),
        (
            [0xf000_1100, 0x0000_0000],
            "image_load v0, v0, s[0:7] dmask:0x1 unorm",
        ),
        (
            [0xf020_1100, 0x0000_0102],
            "image_store v1, v2, s[0:7] dmask:0x1 unorm",
        ),
        (
            [0xf002_7300, 0x8001_0402],
            "image_load v4, v2, s[4:11] dmask:0x3 unorm glc lwe da d16",
        ),
        (
            [0xf038_0f00, 0x0000_0000],
            "image_get_resinfo v[0:3], v0, s[0:7] dmask:0xf",
        ),
        (
            [0xf004_0f00, 0x0000_0000],
            "image_load_mip v[0:3], v0, s[0:7] dmask:0xf",
        ),
        (
            [0xe00c_2000, 0x8002_0804],
            "buffer_load_format_xyzw v[8:11], v4, s[8:11], 0 idxen",
        ),
        (
            [0xe004_1008, 0x8002_0804],
            "buffer_load_format_xy v[8:9], v4, s[8:11], 0 offen offset:8",
        ),
    ] {
        let i = decode(GfxModel::Gfx90a, &words).unwrap();
        assert_eq!(
            i.to_string().split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
    }
}

/// `tests/kernels/image.hip`: the device library's `__ockl_image_load_2D`,
/// `__ockl_image_sample_2D` and `__ockl_image_store_2D` on an 8x8 RGBA8 unorm image (read)
/// and an 8x8 RGBA32F image (written). The library's gfx90a point-sampling workaround
/// snaps normalized coordinates with the width held in dword 10 of HIP's image object, so
/// the descriptor carries it there.
#[test]
fn device_library_image_functions_run() {
    let elf = compile_with_device_libs(&kernel_source("image.hip"), GfxModel::Gfx90a);
    let lo = Loaded::new(&elf);
    let mem = Ranges::default();
    mem.add(lo.image.addr(), lo.image.len as u64);
    let kd = lo.symbol("image_kernel.kd");
    let f = Fmt {
        dfmt: 10,
        nfmt: UNORM,
        chans: 4,
        bits: 8,
    };
    let mut src_img = pattern(256, 11);
    let dst_img = Aligned::new(1024, 256);
    mem.add(src_img.addr(), 256);
    mem.add(dst_img.addr(), 1024);
    let mut src = desc(
        t_sharp(src_img.addr(), f.dfmt, f.nfmt, T2D, [8, 8, 1], 8, IDENTITY),
        s_sharp(2, false, false, 0),
    );
    src[10] = 8;
    let mut dst = desc(
        t_sharp(dst_img.addr(), 14, FLOAT, T2D, [8, 8, 1], 8, IDENTITY),
        [0; 4],
    );
    dst[10] = 8;
    let loaded = [[0f32; 4]; 64];
    let sampled = [[0f32; 4]; 64];
    mem.add_slice(&src);
    mem.add_slice(&dst);
    mem.add_slice(&loaded);
    mem.add_slice(&sampled);
    let mut ka = Kernargs::new();
    ka.put(0, src.as_ptr() as u64);
    ka.put(8, dst.as_ptr() as u64);
    ka.put(16, loaded.as_ptr() as u64);
    ka.put(24, sampled.as_ptr() as u64);
    ka.put_hidden_v5(32, [64, 1, 1], [64, 1, 1]);
    mem.add(ka.addr(), 512);
    for threads in [1, 2] {
        let (d, _p) = packet(
            GfxModel::Gfx90a,
            kd,
            ka.addr(),
            [64, 1, 1],
            [64, 1, 1],
            0,
            &mem,
        );
        let cfg = ExecConfig {
            worker_threads: threads,
            ..ExecConfig::BASE
        };
        run_dispatch(&d, &mem, &cfg).unwrap();
        let bytes = src_img.bytes().to_vec();
        // SAFETY: the dispatch has finished; these were written through their addresses.
        let (loaded, sampled) = unsafe {
            (
                std::ptr::read_volatile(&loaded),
                std::ptr::read_volatile(&sampled),
            )
        };
        let written: Vec<f32> = (0..256)
            // SAFETY: as above, within dst_img's 1024 bytes.
            .map(|k| unsafe { std::ptr::read_volatile((dst_img.addr() as *const f32).add(k)) })
            .collect();
        for l in 0..64 {
            let want = texel(&bytes, 4 * l, f).map(f32::from_bits);
            assert_eq!(loaded[l], want, "load lane {l}");
            assert_eq!(sampled[l], want, "sample lane {l}");
            assert_eq!(
                written[4 * l..4 * l + 4],
                want.map(|x| x * 2.0),
                "store lane {l}"
            );
        }
    }
}

#[test]
fn image_sample_trilinear_3d_and_point_int_1d_array() {
    let (w, h, d) = (3i64, 2i64, 4i64);
    let n = (w * h * d) as usize;
    let vals: Vec<f32> = (0..n).map(|k| (k * 7 % 11) as f32 - 3.0).collect();
    let mut img = Aligned::new(256, 256);
    for (k, v) in vals.iter().enumerate() {
        img.bytes()[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    let mem = Ranges::default();
    mem.add(img.addr(), 4 * n as u64);
    let dims = [w, h, d];
    for clamp in [0u32, 2] {
        let t = t_sharp(img.addr(), 4, FLOAT, T3D, [3, 2, 4], 3, IDENTITY);
        // Z_FILTER 0 (none) follows the XY filter.
        let mut s = s_sharp(clamp, true, true, 0);
        s[2] &= !(3 << 24);
        let dsc = desc(t, s);
        let addr: [[u32; 4]; 64] = std::array::from_fn(|l| {
            let c = [
                l as f32 * 0.29 - 2.0,
                l as f32 * 0.13 - 1.0,
                l as f32 * 0.17 - 3.0,
            ];
            [c[0].to_bits(), c[1].to_bits(), c[2].to_bits(), 0]
        });
        let got = run(
            image_word(SAMPLE, 1, false),
            &dsc,
            &addr,
            &[[0; 4]; 64],
            &mem,
        );
        for l in 0..64 {
            let q = |f: f32| (f * 256.0).round() / 256.0;
            let mut i0 = [0i64; 3];
            let mut fr = [0f32; 3];
            for k in 0..3 {
                let p = f32::from_bits(addr[l][k]) - 0.5;
                i0[k] = p.floor() as i64;
                fr[k] = q(p - p.floor());
            }
            let mut want = 0.0f32;
            for corner in 0..8 {
                let mut wt = 1.0f32;
                let mut idx = [0i64; 3];
                for k in 0..3 {
                    let hi = corner >> k & 1;
                    wt *= if hi == 1 { fr[k] } else { 1.0 - fr[k] };
                    idx[k] = wrap(clamp, i0[k] + hi, dims[k]).unwrap();
                }
                if wt != 0.0 {
                    want += wt * vals[(idx[0] + w * (idx[1] + h * idx[2])) as usize];
                }
            }
            let g = f32::from_bits(got[l][0]);
            assert!(
                (g - want).abs() <= 1e-4,
                "clamp {clamp} lane {l}: {g} want {want}"
            );
        }
    }
    // A 1D array of 3 layers of 5 sint16 texels, point-sampled with normalized x and the
    // layer rounded to the nearest and clamped.
    let f = Fmt {
        dfmt: 2,
        nfmt: SINT,
        chans: 1,
        bits: 16,
    };
    let mut img = pattern(2 * 15, 5);
    mem.add(img.addr(), 30);
    let t = t_sharp(img.addr(), f.dfmt, f.nfmt, T1DA, [5, 1, 3], 5, IDENTITY);
    let dsc = desc(t, s_sharp(1, false, false, 0));
    let addr: [[u32; 4]; 64] = std::array::from_fn(|l| {
        let u = l as f32 * 0.07 - 1.3;
        let layer = l as f32 * 0.09 - 0.8;
        [u.to_bits(), layer.to_bits(), 0, 0]
    });
    let got = run(
        image_word(SAMPLE, 1, false),
        &dsc,
        &addr,
        &[[0; 4]; 64],
        &mem,
    );
    let bytes = img.bytes().to_vec();
    for l in 0..64 {
        let u = f32::from_bits(addr[l][0]) * 5.0;
        let x = wrap(1, u.floor() as i64, 5).unwrap();
        let layer = (f32::from_bits(addr[l][1]).round_ties_even().max(0.0) as i64).min(2);
        let want = texel(&bytes, 2 * (x + 5 * layer) as usize, f)[0];
        assert_eq!(got[l][0], want, "lane {l}");
    }
}

// ---- buffer_load_format_* (MUBUF 0..3) ------------------------------------------------------

/// A buffer resource (V#, GFX9 layout) with a data/number format and DST_SEL.
fn v_sharp(base: u64, stride: u32, records: u32, f: Fmt, dst_sel: [u32; 4]) -> [u32; 8] {
    let mut v = [0u32; 8];
    v[0] = base as u32;
    v[1] = (base >> 32) as u32 & 0xffff | stride << 16;
    v[2] = records;
    v[3] = dst_sel[0]
        | dst_sel[1] << 3
        | dst_sel[2] << 6
        | dst_sel[3] << 9
        | f.nfmt << 12
        | f.dfmt << 15;
    v
}

/// `buffer_load_format_*` (op 0..3) with vaddr v4 (v[4:5] with both), vdata v[8:11], V#
/// s[8:11], soffset 0 and instruction offset `offset`.
fn buffer_format_word(op: u32, idxen: bool, offen: bool, offset: u32) -> [u32; 2] {
    [
        0xe000_0000 | op << 18 | u32::from(idxen) << 13 | u32::from(offen) << 12 | offset,
        4 | 8 << 8 | 2 << 16 | 0x80 << 24,
    ]
}

#[test]
fn buffer_load_format_reads_every_format_by_index_with_zeros_past_the_records() {
    let records = 50u32;
    for (n, f) in formats().into_iter().enumerate() {
        let elem = f.chans * f.bits / 8;
        let mut buf = pattern(elem * records as usize, n as u32 + 100);
        let mem = Ranges::default();
        mem.add(buf.addr(), (elem * records as usize) as u64);
        let v = v_sharp(buf.addr(), elem as u32, records, f, IDENTITY);
        let d = desc(v, [0; 4]);
        let addr: [[u32; 4]; 64] = std::array::from_fn(|l| [(l as u32 * 7) % 61, 0, 0, 0]);
        let data = [[0xdead_beef; 4]; 64];
        let got = run(
            buffer_format_word(3, true, false, 0),
            &d,
            &addr,
            &data,
            &mem,
        );
        let bytes = buf.bytes().to_vec();
        check_lanes(
            f,
            &got,
            |l| {
                let index = addr[l][0];
                if index < records {
                    texel(&bytes, elem * index as usize, f)
                } else {
                    [0; 4]
                }
            },
            |l| format!("index {}", addr[l][0]),
        );
    }
}

#[test]
fn buffer_load_format_writes_its_component_count_swizzled_and_offsets_bytes_without_a_stride() {
    let f = Fmt {
        dfmt: 5,
        nfmt: UINT,
        chans: 2,
        bits: 16,
    };
    let records = 40u32; // bytes: 10 elements of 4 bytes
    let mut buf = pattern(256, 7);
    let mem = Ranges::default();
    mem.add(buf.addr(), 256);
    // Y, X, 1, 0.
    let v = v_sharp(buf.addr(), 0, records, f, [5, 4, 1, 0]);
    let d = desc(v, [0; 4]);
    // Byte offsets: 4 * lane (offen) plus the instruction's 8.
    let addr: [[u32; 4]; 64] = std::array::from_fn(|l| [4 * l as u32, 0, 0, 0]);
    let data = [[0xdead_beef; 4]; 64];
    let bytes = buf.bytes().to_vec();
    for op in 0..4usize {
        let got = run(
            buffer_format_word(op as u32, false, true, 8),
            &d,
            &addr,
            &data,
            &mem,
        );
        for l in 0..64 {
            let at = 4 * l + 8;
            let raw = if at + 4 <= records as usize {
                texel(&bytes, at, f)
            } else {
                [0, 0, 0, 1]
            };
            let want = [raw[1], raw[0], 1, 0];
            for k in 0..4 {
                let want = if k <= op { want[k] } else { 0xdead_beef };
                assert_eq!(got[l][k], want, "op {op} lane {l} component {k}");
            }
        }
    }
}
