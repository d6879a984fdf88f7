//! The operations programs are made of: each one's C (HIP) spelling and its exact host
//! meaning. Most are plain C that clang-19 selects instructions for; `asm` entries force an
//! encoding clang would not pick on its own (SDWA selects, op_sel, neg/abs modifiers,
//! clamp, inline constants of 64-bit moves).

use super::num::*;

/// Value types. `H2` is a packed f16 pair in 32 bits, `F2` a packed f32 pair in 64 bits.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Ty {
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    H2,
    F2,
}

pub const ALL_TYPES: [Ty; 8] = [
    Ty::U32,
    Ty::U64,
    Ty::F16,
    Ty::BF16,
    Ty::F32,
    Ty::F64,
    Ty::H2,
    Ty::F2,
];

impl Ty {
    pub fn c(self) -> &'static str {
        match self {
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::F32 => "float",
            Ty::F64 => "double",
            Ty::H2 => "h2",
            Ty::F2 => "f2",
        }
    }
    pub fn mask(self) -> u64 {
        match self {
            Ty::U64 | Ty::F64 | Ty::F2 => u64::MAX,
            Ty::U32 | Ty::F32 | Ty::H2 => 0xffff_ffff,
            Ty::F16 | Ty::BF16 => 0xffff,
        }
    }
    /// A C expression of this type from the u64 expression `e` holding its bits.
    pub fn of_bits(self, e: &str) -> String {
        match self {
            Ty::U32 => format!("(u32)({e})"),
            Ty::U64 => format!("(u64)({e})"),
            Ty::F16 => format!("__builtin_bit_cast(f16, (unsigned short)({e}))"),
            Ty::BF16 => format!("__builtin_bit_cast(bf16, (unsigned short)({e}))"),
            Ty::F32 => format!("__builtin_bit_cast(float, (u32)({e}))"),
            Ty::F64 => format!("__builtin_bit_cast(double, (u64)({e}))"),
            Ty::H2 => format!("__builtin_bit_cast(h2, (u32)({e}))"),
            Ty::F2 => format!("__builtin_bit_cast(f2, (u64)({e}))"),
        }
    }
    /// A u64 C expression holding the bits of `v` (zero-extended).
    pub fn to_bits(self, v: &str) -> String {
        match self {
            Ty::U32 => format!("(u64){v}"),
            Ty::U64 => v.to_string(),
            Ty::F16 | Ty::BF16 => format!("(u64)__builtin_bit_cast(unsigned short, {v})"),
            Ty::F32 | Ty::H2 => format!("(u64)__builtin_bit_cast(u32, {v})"),
            Ty::F64 | Ty::F2 => format!("__builtin_bit_cast(u64, {v})"),
        }
    }
    /// A C constant of this type.
    pub fn constant(self, bits: u64) -> String {
        match self {
            Ty::U32 => format!("{:#x}u", bits as u32),
            Ty::U64 => format!("{bits:#x}ull"),
            _ => self.of_bits(&format!("{bits:#x}ull")),
        }
    }
    /// Equal results, allowing any NaN for any NaN in float lanes (the ISA and LLVM leave
    /// NaN payloads and quieting to the implementation).
    pub fn same(self, a: u64, b: u64) -> bool {
        let (a, b) = (a & self.mask(), b & self.mask());
        if a == b {
            return true;
        }
        let nan16 = |x: u64| x & 0x7c00 == 0x7c00 && x & 0x3ff != 0;
        let nan_bf = |x: u64| x & 0x7f80 == 0x7f80 && x & 0x7f != 0;
        let nan32 = |x: u64| f32b(x).is_nan();
        match self {
            Ty::U32 | Ty::U64 => false,
            Ty::F16 => nan16(a) && nan16(b),
            Ty::BF16 => nan_bf(a) && nan_bf(b),
            Ty::F32 => nan32(a) && nan32(b),
            Ty::F64 => f64b(a).is_nan() && f64b(b).is_nan(),
            Ty::H2 => Ty::F16.same(a, b) && Ty::F16.same(a >> 16, b >> 16),
            Ty::F2 => Ty::F32.same(a, b) && Ty::F32.same(a >> 32, b >> 32),
        }
    }
    /// Readable value for reports.
    pub fn show(self, x: u64) -> String {
        let x = x & self.mask();
        match self {
            Ty::U32 => format!("{x:#010x} ({})", x as u32 as i32),
            Ty::U64 => format!("{x:#018x} ({})", x as i64),
            Ty::F16 => format!("{x:#06x} ({:e})", f16_to_f64(x as u16)),
            Ty::BF16 => format!("{x:#06x} ({:e})", bf16_to_f32(x as u16)),
            Ty::F32 => format!("{x:#010x} ({:e})", f32b(x)),
            Ty::F64 => format!("{x:#018x} ({:e})", f64b(x)),
            Ty::H2 => format!(
                "{x:#010x} ({:e}, {:e})",
                f16_to_f64(x as u16),
                f16_to_f64((x >> 16) as u16)
            ),
            Ty::F2 => format!("{x:#018x} ({:e}, {:e})", f32b(x), f32b(x >> 32)),
        }
    }
}

/// Which targets an operation compiles for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Only {
    Any,
    Gfx942,
}

pub struct OpDef {
    pub name: &'static str,
    pub ret: Ty,
    pub args: &'static [Ty],
    /// C expression; `$0`.. are the operands.
    pub c: &'static str,
    pub eval: fn(&[u64]) -> u64,
    pub only: Only,
}

// Lane value helpers.
fn u(x: u64) -> u32 {
    x as u32
}
fn i(x: u64) -> i32 {
    x as u32 as i32
}
fn h(x: u64) -> f64 {
    f16_to_f64(x as u16)
}
fn hr(x: f64) -> u64 {
    f16_round(x) as u64
}
fn b16(x: u64) -> f32 {
    bf16_to_f32(x as u16)
}
fn b16r(x: f32) -> u64 {
    f32_to_bf16(x) as u64
}
fn lo16(x: u64) -> u64 {
    x & 0xffff
}
fn hi16(x: u64) -> u64 {
    (x >> 16) & 0xffff
}
fn lo32(x: u64) -> u64 {
    x & 0xffff_ffff
}
fn hi32(x: u64) -> u64 {
    x >> 32
}
fn pack16(lo: u64, hi: u64) -> u64 {
    (lo & 0xffff) | (hi & 0xffff) << 16
}
fn pack32(lo: u64, hi: u64) -> u64 {
    (lo & 0xffff_ffff) | hi << 32
}
/// Bit patterns of results that may be NaN are observed with NaNs made canonical: the
/// payload and sign of a NaN an operation produces are not specified.
fn canon16(x: u64) -> u64 {
    if x & 0x7c00 == 0x7c00 && x & 0x3ff != 0 {
        0x7e00
    } else {
        x
    }
}
fn canon32(x: u64) -> u64 {
    if f32b(x).is_nan() {
        0x7fc0_0000
    } else {
        x
    }
}
fn finite(x: f64) -> bool {
    x.is_finite()
}
fn neg32(x: u64) -> u64 {
    x ^ 0x8000_0000
}
fn clamp01(x: f32) -> f32 {
    // DX10_CLAMP (HIP sets it): NaN clamps to 0.
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

macro_rules! ops {
    ($( $name:literal : $ret:ident ( $($arg:ident),* ) $only:ident = $c:literal => $eval:expr ;)*) => {
        pub fn all() -> Vec<OpDef> {
            vec![ $( OpDef {
                name: $name,
                ret: Ty::$ret,
                args: &[ $(Ty::$arg),* ],
                c: $c,
                eval: $eval,
                only: Only::$only,
            } ),* ]
        }
    };
}

ops! {
    // ---- u32
    "add_u32": U32(U32, U32) Any = "$0 + $1" => |a| u(a[0]).wrapping_add(u(a[1])) as u64;
    "sub_u32": U32(U32, U32) Any = "$0 - $1" => |a| u(a[0]).wrapping_sub(u(a[1])) as u64;
    "mul_u32": U32(U32, U32) Any = "$0 * $1" => |a| u(a[0]).wrapping_mul(u(a[1])) as u64;
    "mad_u32": U32(U32, U32, U32) Any = "$0 * $1 + $2" => |a| u(a[0]).wrapping_mul(u(a[1])).wrapping_add(u(a[2])) as u64;
    "mul_u24": U32(U32, U32) Any = "($0 & 0xffffffu) * ($1 & 0xffffffu)" => |a| (u(a[0]) & 0xffffff).wrapping_mul(u(a[1]) & 0xffffff) as u64;
    "mulhi_u32": U32(U32, U32) Any = "(u32)(((u64)$0 * $1) >> 32)" => |a| (a[0] as u32 as u64 * a[1] as u32 as u64) >> 32;
    "mulhi_i32": U32(U32, U32) Any = "(u32)(((long long)(int)$0 * (int)$1) >> 32)" => |a| ((i(a[0]) as i64 * i(a[1]) as i64) >> 32) as u32 as u64;
    "and_u32": U32(U32, U32) Any = "$0 & $1" => |a| a[0] & a[1] & 0xffff_ffff;
    "or_u32": U32(U32, U32) Any = "$0 | $1" => |a| (a[0] | a[1]) & 0xffff_ffff;
    "xor_u32": U32(U32, U32) Any = "$0 ^ $1" => |a| (a[0] ^ a[1]) & 0xffff_ffff;
    "not_u32": U32(U32) Any = "~$0" => |a| !u(a[0]) as u64;
    "shl_u32": U32(U32, U32) Any = "$0 << ($1 & 31u)" => |a| (u(a[0]) << (a[1] & 31)) as u64;
    "lshr_u32": U32(U32, U32) Any = "$0 >> ($1 & 31u)" => |a| (u(a[0]) >> (a[1] & 31)) as u64;
    "ashr_i32": U32(U32, U32) Any = "(u32)((int)$0 >> ($1 & 31u))" => |a| (i(a[0]) >> (a[1] & 31)) as u32 as u64;
    "umin": U32(U32, U32) Any = "$0 < $1 ? $0 : $1" => |a| u(a[0]).min(u(a[1])) as u64;
    "umax": U32(U32, U32) Any = "$0 > $1 ? $0 : $1" => |a| u(a[0]).max(u(a[1])) as u64;
    "smin": U32(U32, U32) Any = "(int)$0 < (int)$1 ? $0 : $1" => |a| i(a[0]).min(i(a[1])) as u32 as u64;
    "smax": U32(U32, U32) Any = "(int)$0 > (int)$1 ? $0 : $1" => |a| i(a[0]).max(i(a[1])) as u32 as u64;
    // Unsigned division hides its numerator's known bits behind an empty asm: clang-19
    // narrows unsigned div/rem by the operands' sign bits (a sign-extended or negative-
    // remainder value near 2^32 is divided as a small number: 32-bit division with a zero
    // high half for u64, a float division masked to the "bits used" for u32), and its
    // 24-bit float expansion is off by one for some 24-bit numerators even with an exact
    // v_rcp (0xff00fc / 7 gives 2387419). LLVM fixed both after 19 (llvm-project PRs
    // 118928, 196418, 201186, 202753); the code is wrong on hardware too. With the
    // numerator opaque, unsigned division takes the generic 32/64-bit expansion.
    // Signed division too: clang-19 takes the float expansion for a numerator it knows to be
    // a non-negative 24-bit value, where it is off by one on hardware as well (seed 41428;
    // `float_expansion_division_is_exact_in_its_range_and_within_one_beyond` in main.rs
    // covers the expansion where LLVM now uses it).
    "udiv_u32": U32(U32, U32) Any = "({ u32 n_ = $0; __asm__(\"\" : \"+v\"(n_)); n_; }) / ($1 | 1u)" => |a| (u(a[0]) / (u(a[1]) | 1)) as u64;
    "urem_u32": U32(U32, U32) Any = "({ u32 n_ = $0; __asm__(\"\" : \"+v\"(n_)); n_; }) % ($1 | 1u)" => |a| (u(a[0]) % (u(a[1]) | 1)) as u64;
    "sdiv_i32": U32(U32, U32) Any = "(u32)(({ int n_ = (int)$0; __asm__(\"\" : \"+v\"(n_)); n_; }) / (int)(($1 | 1u) & 0x7fffffffu))" => |a| (i(a[0]) / ((u(a[1]) | 1) & 0x7fff_ffff) as i32) as u32 as u64;
    "srem_i32": U32(U32, U32) Any = "(u32)(({ int n_ = (int)$0; __asm__(\"\" : \"+v\"(n_)); n_; }) % (int)(($1 | 1u) & 0x7fffffffu))" => |a| (i(a[0]) % ((u(a[1]) | 1) & 0x7fff_ffff) as i32) as u32 as u64;
    "popc_u32": U32(U32) Any = "(u32)__builtin_popcount($0)" => |a| u(a[0]).count_ones() as u64;
    "clz_u32": U32(U32) Any = "$0 ? (u32)__builtin_clz($0) : 32u" => |a| u(a[0]).leading_zeros() as u64;
    "ctz_u32": U32(U32) Any = "$0 ? (u32)__builtin_ctz($0) : 32u" => |a| u(a[0]).trailing_zeros() as u64;
    "brev_u32": U32(U32) Any = "__builtin_bitreverse32($0)" => |a| u(a[0]).reverse_bits() as u64;
    "bswap_u32": U32(U32) Any = "__builtin_bswap32($0)" => |a| u(a[0]).swap_bytes() as u64;
    "ubfe": U32(U32, U32) Any = "($0 >> ($1 & 31u)) & 0x7ffu" => |a| ((u(a[0]) >> (a[1] & 31)) & 0x7ff) as u64;
    "sbfe": U32(U32) Any = "(u32)(((int)($0 << 7)) >> 19)" => |a| ((i(a[0]) << 7) >> 19) as u32 as u64;
    "alignbit": U32(U32, U32, U32) Any = "(u32)((((u64)$0 << 32) | $1) >> ($2 & 31u))" => |a| (((a[0] & 0xffff_ffff) << 32 | (a[1] & 0xffff_ffff)) >> (a[2] & 31)) as u32 as u64;
    "byteperm": U32(U32, U32) Any = "($0 & 0xff00ff00u) | (($1 >> 8) & 0x00ff00ffu)" => |a| (u(a[0]) & 0xff00_ff00 | (u(a[1]) >> 8) & 0x00ff_00ff) as u64;
    "sel_lt_i32": U32(U32, U32, U32, U32) Any = "(int)$0 < (int)$1 ? $2 : $3" => |a| if i(a[0]) < i(a[1]) { a[2] } else { a[3] };
    "cmp_ult": U32(U32, U32) Any = "(u32)($0 < $1)" => |a| (u(a[0]) < u(a[1])) as u64;
    "udot4": U32(U32, U32, U32) Any = "__builtin_amdgcn_udot4($0, $1, $2, false)" => |a| {
        let mut s = u(a[2]);
        for k in 0..4 { s = s.wrapping_add(((a[0] >> (8 * k)) & 0xff) as u32 * ((a[1] >> (8 * k)) & 0xff) as u32); }
        s as u64
    };
    "sdot4_clamp": U32(U32, U32, U32) Any = "(u32)__builtin_amdgcn_sdot4((int)$0, (int)$1, (int)$2, true)" => |a| {
        let mut s = i(a[2]) as i64;
        for k in 0..4 { s += ((a[0] >> (8 * k)) as u8 as i8 as i64) * ((a[1] >> (8 * k)) as u8 as i8 as i64); }
        s.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
    };
    "trunc_u64": U32(U64) Any = "(u32)$0" => |a| lo32(a[0]);
    "hi_u64": U32(U64) Any = "(u32)($0 >> 32)" => |a| hi32(a[0]);
    "bits_f32": U32(F32) Any = "({ u32 b_ = __builtin_bit_cast(u32, $0); (b_ & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : b_; })" => |a| canon32(lo32(a[0]));
    "bits_h2": U32(H2) Any = "({ u32 b_ = __builtin_bit_cast(u32, $0), l_ = b_ & 0xffffu, h_ = b_ >> 16; ((l_ & 0x7fffu) > 0x7c00u ? 0x7e00u : l_) | ((h_ & 0x7fffu) > 0x7c00u ? 0x7e00u : h_) << 16; })" => |a| canon16(lo16(a[0])) | canon16(hi16(a[0])) << 16;
    "bits_f16": U32(F16) Any = "({ u32 b_ = __builtin_bit_cast(unsigned short, $0); (b_ & 0x7fffu) > 0x7c00u ? 0x7e00u : b_; })" => |a| canon16(lo16(a[0]));
    "bits_bf16": U32(BF16) Any = "({ u32 b_ = __builtin_bit_cast(unsigned short, $0); (b_ & 0x7fffu) > 0x7f80u ? 0x7fc0u : b_; })" => |a| if b16(a[0]).is_nan() { 0x7fc0 } else { lo16(a[0]) };
    "cvt_i32_f32": U32(F32) Any = "($0 > -2147483904.0f && $0 < 2147483648.0f) ? (u32)(int)$0 : 0x1234u" => |a| { let x = f32b(a[0]); if x > -2147483904.0 && x < 2147483648.0 { x as i32 as u32 as u64 } else { 0x1234 } };
    "cvt_u32_f32": U32(F32) Any = "($0 > -1.0f && $0 < 4294967296.0f) ? (u32)$0 : 0x4321u" => |a| { let x = f32b(a[0]); if x > -1.0 && x < 4294967296.0 { x as u32 as u64 } else { 0x4321 } };
    "cvt_i32_f64": U32(F64) Any = "($0 > -2147483649.0 && $0 < 2147483648.0) ? (u32)(int)$0 : 0x777u" => |a| { let x = f64b(a[0]); if x > -2147483649.0 && x < 2147483648.0 { x as i32 as u32 as u64 } else { 0x777 } };
    "cvt_i32_f16": U32(F16) Any = "($0 - $0 == (f16)0) ? (u32)(int)$0 : 0x55u" => |a| { let x = h(a[0]); if finite(x) { x as i32 as u32 as u64 } else { 0x55 } };
    "cmp_lt_f32": U32(F32, F32) Any = "(u32)($0 < $1)" => |a| (f32b(a[0]) < f32b(a[1])) as u64;
    "cmp_class_f64": U32(F64) Any = "(u32)__builtin_isnormal($0) | ((u32)__builtin_isinf($0) << 1) | ((u32)__builtin_isnan($0) << 2)" => |a| { let x = f64b(a[0]); (x.is_normal() as u64) | (x.is_infinite() as u64) << 1 | (x.is_nan() as u64) << 2 };
    "sdwa_add_sext": U32(U32, U32) Any = "({ u32 r_; __asm__(\"v_add_u32_sdwa %0, sext(%1), %2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| ((a[0] >> 8) as u8 as i8 as i32 as u32).wrapping_add(hi16(a[1]) as u32) as u64;
    "sdwa_mov_preserve": U32(U32, U32) Any = "({ u32 r_; __asm__(\"v_mov_b32_sdwa %0, %1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0\" : \"=v\"(r_) : \"v\"($0), \"0\"($1)); r_; })" => |a| pack16(a[1], a[0]);
    "sdwa_sub_sext_dst": U32(U32, U32) Any = "({ u32 r_; __asm__(\"v_sub_u32_sdwa %0, %1, %2 dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_0 src1_sel:BYTE_3\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| ((a[0] & 0xff) as u32).wrapping_sub((a[1] >> 24) as u8 as u32) as u16 as i16 as i32 as u32 as u64;
    "sdwa_mul_u24": U32(U32, U32) Any = "({ u32 r_; __asm__(\"v_mul_u32_u24_sdwa %0, %1, %2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2 src1_sel:WORD_0\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| (((a[0] >> 16) & 0xff) * lo16(a[1])) & 0xffff_ffff;
    "fp8_to_f32_bits": U32(U32) Gfx942 = "__builtin_bit_cast(u32, __builtin_amdgcn_cvt_f32_fp8((int)$0, 1))" => |a| bf32(fp8_fnuz((a[0] >> 8) as u8, 3, 8));
    "bf8_to_f32_bits": U32(U32) Gfx942 = "__builtin_bit_cast(u32, __builtin_amdgcn_cvt_f32_bf8((int)$0, 2))" => |a| bf32(fp8_fnuz((a[0] >> 16) as u8, 2, 16));

    // ---- u64
    "add_u64": U64(U64, U64) Any = "$0 + $1" => |a| a[0].wrapping_add(a[1]);
    "sub_u64": U64(U64, U64) Any = "$0 - $1" => |a| a[0].wrapping_sub(a[1]);
    "mul_u64": U64(U64, U64) Any = "$0 * $1" => |a| a[0].wrapping_mul(a[1]);
    "mulhi_u64": U64(U64, U64) Any = "(u64)(((unsigned __int128)$0 * $1) >> 64)" => |a| ((a[0] as u128 * a[1] as u128) >> 64) as u64;
    "mad_u64_u32": U64(U32, U32, U64) Any = "(u64)$0 * $1 + $2" => |a| (lo32(a[0]) * lo32(a[1])).wrapping_add(a[2]);
    "and_u64": U64(U64, U64) Any = "$0 & $1" => |a| a[0] & a[1];
    "or_u64": U64(U64, U64) Any = "$0 | $1" => |a| a[0] | a[1];
    "xor_u64": U64(U64, U64) Any = "$0 ^ $1" => |a| a[0] ^ a[1];
    "shl_u64": U64(U64, U32) Any = "$0 << ($1 & 63u)" => |a| a[0] << (a[1] & 63);
    "lshr_u64": U64(U64, U32) Any = "$0 >> ($1 & 63u)" => |a| a[0] >> (a[1] & 63);
    "ashr_i64": U64(U64, U32) Any = "(u64)((long long)$0 >> ($1 & 63u))" => |a| ((a[0] as i64) >> (a[1] & 63)) as u64;
    "lshl_add_1": U64(U64, U64) Any = "($0 << 1) + $1" => |a| (a[0] << 1).wrapping_add(a[1]);
    "lshl_add_3": U64(U64, U64) Any = "($0 << 3) + $1" => |a| (a[0] << 3).wrapping_add(a[1]);
    "umin_u64": U64(U64, U64) Any = "$0 < $1 ? $0 : $1" => |a| a[0].min(a[1]);
    "smax_i64": U64(U64, U64) Any = "(long long)$0 > (long long)$1 ? $0 : $1" => |a| (a[0] as i64).max(a[1] as i64) as u64;
    // The numerator is opaque for the reason given at udiv_u32.
    "udiv_u64": U64(U64, U64) Any = "({ u64 n_ = $0; __asm__(\"\" : \"+v\"(n_)); n_; }) / ($1 | 1ull)" => |a| a[0] / (a[1] | 1);
    "urem_u64": U64(U64, U64) Any = "({ u64 n_ = $0; __asm__(\"\" : \"+v\"(n_)); n_; }) % ($1 | 1ull)" => |a| a[0] % (a[1] | 1);
    "popc_u64": U64(U64) Any = "(u64)__builtin_popcountll($0)" => |a| a[0].count_ones() as u64;
    "clz_u64": U64(U64) Any = "$0 ? (u64)__builtin_clzll($0) : 64ull" => |a| a[0].leading_zeros() as u64;
    "zext_u64": U64(U32) Any = "(u64)$0" => |a| lo32(a[0]);
    "sext_u64": U64(U32) Any = "(u64)(long long)(int)$0" => |a| i(a[0]) as i64 as u64;
    "pair_u64": U64(U32, U32) Any = "((u64)$0 << 32) | $1" => |a| pack32(a[1], a[0]);
    "bits_f64": U64(F64) Any = "({ u64 b_ = __builtin_bit_cast(u64, $0); (b_ & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : b_; })" => |a| if f64b(a[0]).is_nan() { 0x7ff8_0000_0000_0000 } else { a[0] };
    "bits_f2": U64(F2) Any = "({ u64 b_ = __builtin_bit_cast(u64, $0); u64 l_ = b_ & 0xffffffffull, h_ = b_ >> 32; ((l_ & 0x7fffffffull) > 0x7f800000ull ? 0x7fc00000ull : l_) | ((h_ & 0x7fffffffull) > 0x7f800000ull ? 0x7fc00000ull : h_) << 32; })" => |a| pack32(canon32(lo32(a[0])), canon32(hi32(a[0])));
    "cvt_i64_f64": U64(F64) Any = "($0 > -9223372036854777856.0 && $0 < 9223372036854775808.0) ? (u64)(long long)$0 : 0x99ull" => |a| { let x = f64b(a[0]); if x > -9223372036854777856.0 && x < 9223372036854775808.0 { x as i64 as u64 } else { 0x99 } };
    "cvt_u64_f32": U64(F32) Any = "($0 > -1.0f && $0 < 18446744073709551616.0f) ? (u64)$0 : 0x98ull" => |a| { let x = f32b(a[0]); if x > -1.0 && x < 18446744073709551616.0 { x as u64 } else { 0x98 } };
    "asm_lshl_add_u64": U64(U64, U64) Gfx942 = "({ u64 r_; __asm__(\"v_lshl_add_u64 %0, %1, 2, %2\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| (a[0] << 2).wrapping_add(a[1]);
    "asm_lshl_add_u64_4": U64(U64, U64) Gfx942 = "({ u64 r_; __asm__(\"v_lshl_add_u64 %0, %1, 4, %2\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| (a[0] << 4).wrapping_add(a[1]);
    "asm_mov_b64": U64(U64) Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, %1\" : \"=v\"(r_) : \"v\"($0)); r_; })" => |a| a[0];
    "asm_mov_b64_1.0": U64() Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, 1.0\" : \"=v\"(r_)); r_; })" => |_| 1f64.to_bits();
    "asm_mov_b64_-4.0": U64() Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, -4.0\" : \"=v\"(r_)); r_; })" => |_| (-4f64).to_bits();
    "asm_mov_b64_0.5": U64() Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, 0.5\" : \"=v\"(r_)); r_; })" => |_| 0.5f64.to_bits();
    "asm_mov_b64_-7": U64() Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, -7\" : \"=v\"(r_)); r_; })" => |_| (-7i64) as u64;
    "asm_mov_b64_64": U64() Gfx942 = "({ u64 r_; __asm__(\"v_mov_b64 %0, 64\" : \"=v\"(r_)); r_; })" => |_| 64;
    "asm_pk_mov_b32": U64(U64, U64) Any = "({ u64 r_; __asm__(\"v_pk_mov_b32 %0, %1, %2 op_sel:[1,0]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack32(hi32(a[0]), lo32(a[1]));
    "asm_pk_mov_b32_2": U64(U64, U64) Any = "({ u64 r_; __asm__(\"v_pk_mov_b32 %0, %1, %2 op_sel:[0,1]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack32(lo32(a[0]), hi32(a[1]));

    // ---- f32
    "add_f32": F32(F32, F32) Any = "$0 + $1" => |a| bf32(f32b(a[0]) + f32b(a[1]));
    // The difference is opaque to its users: clang-19 folds `0.0f - x` (a minuend that
    // folds to +0) into a neg source modifier of the user, since instruction selection
    // takes `fsub +-0, x` for a negation (AMDGPUDAGToDAGISel::SelectVOP3ModsImpl), which
    // is wrong for x = +0: +0 - +0 is +0, -(+0) is -0 (seed 4138 of `difftest.sh 200
    // 4000`, `fsub_from_zero_feeding_a_multiply`). f64 and packed f16 are not affected.
    "sub_f32": F32(F32, F32) Any = "({ float d_ = $0 - $1; __asm__(\"\" : \"+v\"(d_)); d_; })" => |a| bf32(f32b(a[0]) - f32b(a[1]));
    "mul_f32": F32(F32, F32) Any = "$0 * $1" => |a| bf32(f32b(a[0]) * f32b(a[1]));
    "div_f32": F32(F32, F32) Any = "$0 / $1" => |a| bf32(f32b(a[0]) / f32b(a[1]));
    "fma_f32": F32(F32, F32, F32) Any = "__builtin_fmaf($0, $1, $2)" => |a| bf32(f32b(a[0]).mul_add(f32b(a[1]), f32b(a[2])));
    "fma_mods_f32": F32(F32, F32, F32) Any = "__builtin_fmaf(-$0, __builtin_fabsf($1), $2)" => |a| bf32((-f32b(a[0])).mul_add(f32b(a[1]).abs(), f32b(a[2])));
    "min_f32": F32(F32, F32) Any = "__builtin_fminf($0, $1) + 0.0f" => |a| bf32(fmin32(f32b(a[0]), f32b(a[1])) + 0.0);
    "max_f32": F32(F32, F32) Any = "__builtin_fmaxf($0, $1) + 0.0f" => |a| bf32(fmax32(f32b(a[0]), f32b(a[1])) + 0.0);
    "clamp_f32": F32(F32) Any = "__builtin_fminf(__builtin_fmaxf($0, 0.0f), 1.0f) + 0.0f" => |a| bf32(fmin32(fmax32(f32b(a[0]), 0.0), 1.0) + 0.0);
    // The raw instructions order -0 below +0 (C's fmin/fmax above leave it open); inputs
    // are canonicalized so that no signaling NaN reaches them.
    "asm_min_f32": F32(F32, F32) Any = "({ float r_; __asm__(\"v_min_f32 %0, %1, %2\" : \"=v\"(r_) : \"v\"(__builtin_canonicalizef($0)), \"v\"(__builtin_canonicalizef($1))); r_; })" => |a| bf32(fmin32(f32b(a[0]), f32b(a[1])));
    "asm_max_f32": F32(F32, F32) Any = "({ float r_; __asm__(\"v_max_f32 %0, %1, %2\" : \"=v\"(r_) : \"v\"(__builtin_canonicalizef($0)), \"v\"(__builtin_canonicalizef($1))); r_; })" => |a| bf32(fmax32(f32b(a[0]), f32b(a[1])));
    "asm_max_f64": F64(F64, F64) Any = "({ double r_; __asm__(\"v_max_f64 %0, %1, %2\" : \"=v\"(r_) : \"v\"(__builtin_canonicalize($0)), \"v\"(__builtin_canonicalize($1))); r_; })" => |a| bf64(fmax64(f64b(a[0]), f64b(a[1])));
    "asm_min_f64": F64(F64, F64) Any = "({ double r_; __asm__(\"v_min_f64 %0, %1, %2\" : \"=v\"(r_) : \"v\"(__builtin_canonicalize($0)), \"v\"(__builtin_canonicalize($1))); r_; })" => |a| bf64(fmin64(f64b(a[0]), f64b(a[1])));
    "neg_f32": F32(F32) Any = "-$0" => |a| neg32(a[0]);
    "abs_f32": F32(F32) Any = "__builtin_fabsf($0)" => |a| a[0] & 0x7fff_ffff;
    "sqrt_f32": F32(F32) Any = "__builtin_sqrtf($0)" => |a| bf32(f32b(a[0]).sqrt());
    "floor_f32": F32(F32) Any = "__builtin_floorf($0)" => |a| bf32(f32b(a[0]).floor());
    "ceil_f32": F32(F32) Any = "__builtin_ceilf($0)" => |a| bf32(f32b(a[0]).ceil());
    "trunc_f32": F32(F32) Any = "__builtin_truncf($0)" => |a| bf32(f32b(a[0]).trunc());
    "rint_f32": F32(F32) Any = "__builtin_rintf($0)" => |a| bf32(f32b(a[0]).round_ties_even());
    "copysign_f32": F32(F32, F32) Any = "__builtin_copysignf($0, $1 != $1 ? 1.0f : $1)" => |a| bf32(f32b(a[0]).copysign(if f32b(a[1]).is_nan() { 1.0 } else { f32b(a[1]) }));
    "ldexp_f32": F32(F32, U32) Any = "__builtin_ldexpf($0, (int)($1 & 63u) - 32)" => |a| bf32(f32b(a[0]) * 2f32.powi((a[1] & 63) as i32 - 32));
    "sel_f32": F32(F32, F32, F32, F32) Any = "$0 < $1 ? $2 : $3" => |a| if f32b(a[0]) < f32b(a[1]) { a[2] } else { a[3] };
    "u32_to_f32": F32(U32) Any = "(float)$0" => |a| bf32(u(a[0]) as f32);
    "i32_to_f32": F32(U32) Any = "(float)(int)$0" => |a| bf32(i(a[0]) as f32);
    "u64_to_f32": F32(U64) Any = "(float)$0" => |a| bf32(a[0] as f32);
    "i64_to_f32": F32(U64) Any = "(float)(long long)$0" => |a| bf32(a[0] as i64 as f32);
    "f64_to_f32": F32(F64) Any = "(float)$0" => |a| bf32(f64b(a[0]) as f32);
    "f16_to_f32": F32(F16) Any = "(float)$0" => |a| bf32(h(a[0]) as f32);
    "bf16_to_f32": F32(BF16) Any = "(float)$0" => |a| bf32(b16(a[0]));
    "bits_to_f32": F32(U32) Any = "__builtin_bit_cast(float, $0)" => |a| lo32(a[0]);
    "f2_x": F32(F2) Any = "$0.x" => |a| lo32(a[0]);
    "f2_y": F32(F2) Any = "$0.y" => |a| hi32(a[0]);
    "asm_add_clamp_f32": F32(F32, F32) Any = "({ float r_; __asm__(\"v_add_f32_e64 %0, %1, %2 clamp\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_ + 0.0f; })" => |a| bf32(clamp01(f32b(a[0]) + f32b(a[1])) + 0.0);
    "asm_fma_mods_f32": F32(F32, F32, F32) Any = "({ float r_; __asm__(\"v_fma_f32 %0, -|%1|, %2, -%3\" : \"=v\"(r_) : \"v\"($0), \"v\"($1), \"v\"($2)); r_; })" => |a| bf32((-f32b(a[0]).abs()).mul_add(f32b(a[1]), -f32b(a[2])));
    "asm_fma_mix_f32": F32(H2, H2, F32) Any = "({ float r_; __asm__(\"v_fma_mix_f32 %0, %1, %2, %3 op_sel:[1,0,0] op_sel_hi:[1,1,0]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1), \"v\"($2)); r_; })" => |a| bf32((h(hi16(a[0])) as f32).mul_add(h(lo16(a[1])) as f32, f32b(a[2])));
    "fp8_to_f32": F32(U32) Gfx942 = "__builtin_amdgcn_cvt_f32_fp8((int)$0, 3)" => |a| bf32(fp8_fnuz((a[0] >> 24) as u8, 3, 8));

    // ---- f64
    "add_f64": F64(F64, F64) Any = "$0 + $1" => |a| bf64(f64b(a[0]) + f64b(a[1]));
    "sub_f64": F64(F64, F64) Any = "$0 - $1" => |a| bf64(f64b(a[0]) - f64b(a[1]));
    "mul_f64": F64(F64, F64) Any = "$0 * $1" => |a| bf64(f64b(a[0]) * f64b(a[1]));
    "div_f64": F64(F64, F64) Any = "$0 / $1" => |a| bf64(f64b(a[0]) / f64b(a[1]));
    "fma_f64": F64(F64, F64, F64) Any = "__builtin_fma($0, $1, $2)" => |a| bf64(f64b(a[0]).mul_add(f64b(a[1]), f64b(a[2])));
    "fma_mods_f64": F64(F64, F64, F64) Any = "__builtin_fma(__builtin_fabs($0), -$1, $2)" => |a| bf64(f64b(a[0]).abs().mul_add(-f64b(a[1]), f64b(a[2])));
    // The `+ 0.0` makes the sign of a zero result one answer (min/max of -0 and +0 may be
    // either). The min or max is hidden from clang first: clang-19 drops the add after
    // `fmax(x, -0.0)`, as if the max could not be -0 (gfx90a seed 12256).
    "min_f64": F64(F64, F64) Any = "({ double m_ = __builtin_fmin($0, $1); __asm__(\"\" : \"+v\"(m_)); m_; }) + 0.0" => |a| bf64(fmin64(f64b(a[0]), f64b(a[1])) + 0.0);
    "max_f64": F64(F64, F64) Any = "({ double m_ = __builtin_fmax($0, $1); __asm__(\"\" : \"+v\"(m_)); m_; }) + 0.0" => |a| bf64(fmax64(f64b(a[0]), f64b(a[1])) + 0.0);
    "neg_f64": F64(F64) Any = "-$0" => |a| a[0] ^ 1 << 63;
    "abs_f64": F64(F64) Any = "__builtin_fabs($0)" => |a| a[0] & !(1 << 63);
    "sqrt_f64": F64(F64) Any = "__builtin_sqrt($0)" => |a| bf64(f64b(a[0]).sqrt());
    "floor_f64": F64(F64) Any = "__builtin_floor($0)" => |a| bf64(f64b(a[0]).floor());
    "ceil_f64": F64(F64) Any = "__builtin_ceil($0)" => |a| bf64(f64b(a[0]).ceil());
    "trunc_f64": F64(F64) Any = "__builtin_trunc($0)" => |a| bf64(f64b(a[0]).trunc());
    "rint_f64": F64(F64) Any = "__builtin_rint($0)" => |a| bf64(f64b(a[0]).round_ties_even());
    "ldexp_f64": F64(F64, U32) Any = "__builtin_ldexp($0, (int)($1 & 127u) - 64)" => |a| bf64(f64b(a[0]) * 2f64.powi((a[1] & 127) as i32 - 64));
    "sel_f64": F64(F64, F64, F64, F64) Any = "$0 <= $1 ? $2 : $3" => |a| if f64b(a[0]) <= f64b(a[1]) { a[2] } else { a[3] };
    "u32_to_f64": F64(U32) Any = "(double)$0" => |a| bf64(u(a[0]) as f64);
    "i32_to_f64": F64(U32) Any = "(double)(int)$0" => |a| bf64(i(a[0]) as f64);
    "u64_to_f64": F64(U64) Any = "(double)$0" => |a| bf64(a[0] as f64);
    "i64_to_f64": F64(U64) Any = "(double)(long long)$0" => |a| bf64(a[0] as i64 as f64);
    "f32_to_f64": F64(F32) Any = "(double)$0" => |a| bf64(f32b(a[0]) as f64);
    "f16_to_f64": F64(F16) Any = "(double)$0" => |a| bf64(h(a[0]));
    "bits_to_f64": F64(U64) Any = "__builtin_bit_cast(double, $0)" => |a| a[0];

    // ---- f16
    "add_f16": F16(F16, F16) Any = "$0 + $1" => |a| hr(h(a[0]) + h(a[1]));
    // Opaque for the reason given at sub_f32.
    "sub_f16": F16(F16, F16) Any = "({ f16 d_ = $0 - $1; __asm__(\"\" : \"+v\"(d_)); d_; })" => |a| hr(h(a[0]) - h(a[1]));
    "mul_f16": F16(F16, F16) Any = "$0 * $1" => |a| hr(h(a[0]) * h(a[1]));
    // f16 division through an f32 division whose quotient is opaque: clang-19 expands a
    // plain f16 `/` as v_rcp_f32, one v_fma_mixlo_f16 product and v_div_fixup_f16, which is
    // not correctly rounded (0x3ff / -6.0 gives 0x80ab, not 0x80aa: seed 5114 of
    // `difftest.sh 300 5000`; LLVM 20 adopted a refined sequence, llvm-project PR 109295).
    // Rounding the correctly rounded f32 quotient to f16 is exact (24 >= 2 * 11 + 2 bits);
    // the asm keeps clang from narrowing the division back to f16.
    "div_f16": F16(F16, F16) Any = "(f16)({ float q_ = (float)$0 / (float)$1; __asm__(\"\" : \"+v\"(q_)); q_; })" => |a| hr(h(a[0]) / h(a[1]));
    "fma_f16": F16(F16, F16, F16) Any = "__builtin_fmaf16($0, $1, $2)" => |a| f16_fma(a[0] as u16, a[1] as u16, a[2] as u16) as u64;
    // Mixed-precision fma rounded once to f16: f16 halves and an f32 addend into the low
    // half; f32 sources into the high half with the addend moved onto an f16 tie (low 13
    // mantissa bits 0x1000) and a product scaled far below it, so that only a single
    // rounding of the exact sum breaks the tie the right way.
    "asm_fma_mixlo_f16": F16(H2, H2, F32) Any = "({ u32 r_ = 0u; __asm__(\"v_fma_mixlo_f16 %0, %1, %2, %3 op_sel:[0,1,0] op_sel_hi:[1,1,0]\" : \"+v\"(r_) : \"v\"($0), \"v\"($1), \"v\"($2)); __builtin_bit_cast(f16, (unsigned short)r_); })" => |a| f16_fma_f32(h(a[0]) as f32, h(hi16(a[1])) as f32, f32b(a[2])) as u64;
    "asm_fma_mixhi_f16_tie": H2(F32, F32, H2) Any = "({ h2 r_ = $2; __asm__(\"v_fma_mixhi_f16 %0, %1, %2, %3\" : \"+v\"(r_) : \"v\"($0), \"v\"(0x1p-60f), \"v\"(__builtin_bit_cast(float, (__builtin_bit_cast(u32, $1) & 0xffffe000u) | 0x1000u))); r_; })" => |a| pack16(a[2], f16_fma_f32(f32b(a[0]), 2f32.powi(-60), f32::from_bits((a[1] as u32 & 0xffff_e000) | 0x1000)) as u64);
    "min_f16": F16(F16, F16) Any = "__builtin_fminf16($0, $1) + (f16)0" => |a| hr(fmin64(h(a[0]), h(a[1])) + 0.0);
    "max_f16": F16(F16, F16) Any = "__builtin_fmaxf16($0, $1) + (f16)0" => |a| hr(fmax64(h(a[0]), h(a[1])) + 0.0);
    "neg_f16": F16(F16) Any = "-$0" => |a| lo16(a[0] ^ 0x8000);
    "abs_f16": F16(F16) Any = "__builtin_fabsf16($0)" => |a| a[0] & 0x7fff;
    "floor_f16": F16(F16) Any = "__builtin_floorf16($0)" => |a| hr(h(a[0]).floor());
    "ceil_f16": F16(F16) Any = "__builtin_ceilf16($0)" => |a| hr(h(a[0]).ceil());
    "trunc_f16": F16(F16) Any = "__builtin_truncf16($0)" => |a| hr(h(a[0]).trunc());
    "rint_f16": F16(F16) Any = "__builtin_rintf16($0)" => |a| hr(h(a[0]).round_ties_even());
    // Behind an empty asm: clang-19 folds `(f16)(a * b)` into `v_fma_mixlo_f16 d, a, b, 0`,
    // whose +0 addend turns a -0 product into +0 (gfx942 seeds 10455, 31988, gfx90a 11074).
    "f32_to_f16": F16(F32) Any = "({ float t_ = $0; __asm__(\"\" : \"+v\"(t_)); (f16)t_; })" => |a| hr(f32b(a[0]) as f64);
    "f64_to_f16": F16(F64) Any = "(f16)$0" => |a| hr(f64b(a[0]));
    "u32_to_f16": F16(U32) Any = "(f16)($0 & 0xffffu)" => |a| hr((a[0] & 0xffff) as f64);
    "bits_to_f16": F16(U32) Any = "__builtin_bit_cast(f16, (unsigned short)$0)" => |a| lo16(a[0]);
    "h2_x": F16(H2) Any = "$0.x" => |a| lo16(a[0]);
    "h2_y": F16(H2) Any = "$0.y" => |a| hi16(a[0]);

    // ---- bf16 (clang-19 computes in f32 and rounds back for these targets)
    "add_bf16": BF16(BF16, BF16) Any = "$0 + $1" => |a| b16r(b16(a[0]) + b16(a[1]));
    "sub_bf16": BF16(BF16, BF16) Any = "$0 - $1" => |a| b16r(b16(a[0]) - b16(a[1]));
    "mul_bf16": BF16(BF16, BF16) Any = "$0 * $1" => |a| b16r(b16(a[0]) * b16(a[1]));
    // The f32 goes through an empty asm first: clang-19 folds `(bf16)(float)(int)b` of a
    // 0-or-1 `b` into an i1-to-bf16 conversion its gfx90a backend cannot select (it stops
    // with "Cannot select: bf16 = uint_to_fp"; `scripts/difftest.sh 2000 20000 60`).
    "f32_to_bf16": BF16(F32) Any = "({ float t_ = $0; __asm__(\"\" : \"+v\"(t_)); (bf16)t_; })" => |a| b16r(f32b(a[0]));
    "bits_to_bf16": BF16(U32) Any = "__builtin_bit_cast(bf16, (unsigned short)$0)" => |a| lo16(a[0]);

    // ---- packed f16 pairs
    "pk_add_f16": H2(H2, H2) Any = "$0 + $1" => |a| pack16(hr(h(a[0]) + h(a[1])), hr(h(hi16(a[0])) + h(hi16(a[1]))));
    "pk_mul_f16": H2(H2, H2) Any = "$0 * $1" => |a| pack16(hr(h(a[0]) * h(a[1])), hr(h(hi16(a[0])) * h(hi16(a[1]))));
    "pk_fma_f16": H2(H2, H2, H2) Any = "__builtin_elementwise_fma($0, $1, $2)" => |a| pack16(f16_fma(a[0] as u16, a[1] as u16, a[2] as u16) as u64, f16_fma(hi16(a[0]) as u16, hi16(a[1]) as u16, hi16(a[2]) as u16) as u64);
    "pk_min_f16": H2(H2, H2) Any = "__builtin_elementwise_min($0, $1) + (h2)((f16)0)" => |a| pack16(hr(fmin64(h(a[0]), h(a[1])) + 0.0), hr(fmin64(h(hi16(a[0])), h(hi16(a[1]))) + 0.0));
    "pk_max_f16": H2(H2, H2) Any = "__builtin_elementwise_max($0, $1) + (h2)((f16)0)" => |a| pack16(hr(fmax64(h(a[0]), h(a[1])) + 0.0), hr(fmax64(h(hi16(a[0])), h(hi16(a[1]))) + 0.0));
    // The high half is opaque: clang-19 selects (h2){x, -0.0} as `x & 0xffff`, losing the
    // constant's sign (the IR is right; {-0.0, x} and other constants are fine).
    "make_h2": H2(F16, F16) Any = "(h2){$0, ({ f16 t_ = $1; __asm__(\"\" : \"+v\"(t_)); t_; })}" => |a| pack16(a[0], a[1]);
    "swap_h2": H2(H2) Any = "$0.yx" => |a| pack16(hi16(a[0]), a[0]);
    "pkrtz": H2(F32, F32) Any = "__builtin_bit_cast(h2, __builtin_amdgcn_cvt_pkrtz($0, $1))" => |a| pack16(to_f16(f32b(a[0]) as f64, 0.0, Rnd::TowardZero) as u64, to_f16(f32b(a[1]) as f64, 0.0, Rnd::TowardZero) as u64);
    "bits_to_h2": H2(U32) Any = "__builtin_bit_cast(h2, $0)" => |a| lo32(a[0]);
    "asm_pk_add_f16_opsel": H2(H2, H2) Any = "({ h2 r_; __asm__(\"v_pk_add_f16 %0, %1, %2 op_sel:[1,0] op_sel_hi:[0,1]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack16(hr(h(hi16(a[0])) + h(a[1])), hr(h(a[0]) + h(hi16(a[1]))));
    "asm_pk_fma_f16_neg": H2(H2, H2, H2) Any = "({ h2 r_; __asm__(\"v_pk_fma_f16 %0, %1, %2, %3 neg_lo:[1,0,0] neg_hi:[0,0,1]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1), \"v\"($2)); r_; })" => |a| pack16(f16_fma((a[0] ^ 0x8000) as u16, a[1] as u16, a[2] as u16) as u64, f16_fma(hi16(a[0]) as u16, hi16(a[1]) as u16, (hi16(a[2]) ^ 0x8000) as u16) as u64);
    "asm_sdwa_add_f16": H2(H2, H2) Any = "({ h2 r_; __asm__(\"v_add_f16_sdwa %0, %1, %2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:WORD_0\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack16(0, hr(h(hi16(a[0])) + h(a[1])));

    // ---- packed f32 pairs (v_pk_*_f32 on gfx90a and gfx942)
    "pk_add_f32": F2(F2, F2) Any = "$0 + $1" => |a| pack32(bf32(f32b(a[0]) + f32b(a[1])), bf32(f32b(hi32(a[0])) + f32b(hi32(a[1]))));
    "pk_mul_f32": F2(F2, F2) Any = "$0 * $1" => |a| pack32(bf32(f32b(a[0]) * f32b(a[1])), bf32(f32b(hi32(a[0])) * f32b(hi32(a[1]))));
    "pk_fma_f32": F2(F2, F2, F2) Any = "__builtin_elementwise_fma($0, $1, $2)" => |a| pack32(bf32(f32b(a[0]).mul_add(f32b(a[1]), f32b(a[2]))), bf32(f32b(hi32(a[0])).mul_add(f32b(hi32(a[1])), f32b(hi32(a[2])))));
    "make_f2": F2(F32, F32) Any = "(f2){$0, $1}" => |a| pack32(a[0], a[1]);
    "swap_f2": F2(F2) Any = "$0.yx" => |a| pack32(hi32(a[0]), a[0]);
    "splat_f2": F2(F32) Any = "(f2)($0)" => |a| pack32(a[0], a[0]);
    "pk_fp8_to_f2": F2(U32) Gfx942 = "__builtin_bit_cast(f2, __builtin_amdgcn_cvt_pk_f32_fp8((int)$0, true))" => |a| pack32(bf32(fp8_fnuz((a[0] >> 16) as u8, 3, 8)), bf32(fp8_fnuz((a[0] >> 24) as u8, 3, 8)));
    "pk_bf8_to_f2": F2(U32) Gfx942 = "__builtin_bit_cast(f2, __builtin_amdgcn_cvt_pk_f32_bf8((int)$0, false))" => |a| pack32(bf32(fp8_fnuz(a[0] as u8, 2, 16)), bf32(fp8_fnuz((a[0] >> 8) as u8, 2, 16)));
    "bits_to_f2": F2(U64) Any = "__builtin_bit_cast(f2, $0)" => |a| a[0];
    "asm_pk_add_f32_opsel": F2(F2, F2) Any = "({ f2 r_; __asm__(\"v_pk_add_f32 %0, %1, %2 op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[1,0]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack32(bf32(-f32b(hi32(a[0])) + f32b(a[1])), bf32(f32b(a[0]) + f32b(hi32(a[1]))));
    "asm_pk_mul_f32_neg": F2(F2, F2) Any = "({ f2 r_; __asm__(\"v_pk_mul_f32 %0, %1, %2 neg_lo:[0,1] neg_hi:[1,1]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1)); r_; })" => |a| pack32(bf32(f32b(a[0]) * -f32b(a[1])), bf32(-f32b(hi32(a[0])) * -f32b(hi32(a[1]))));
    "asm_pk_fma_f32_opsel": F2(F2, F2, F2) Any = "({ f2 r_; __asm__(\"v_pk_fma_f32 %0, %1, %2, %3 op_sel_hi:[0,1,1]\" : \"=v\"(r_) : \"v\"($0), \"v\"($1), \"v\"($2)); r_; })" => |a| pack32(bf32(f32b(a[0]).mul_add(f32b(a[1]), f32b(a[2]))), bf32(f32b(a[0]).mul_add(f32b(hi32(a[1])), f32b(hi32(a[2])))));
}
