//! Handlers whose lane loops the host's vector units should run. The crate is built for
//! baseline x86-64 (SSE2, no FMA), where `f32::mul_add` is a library call per lane and the
//! 64-lane loops use 128-bit operations. [`simd_handler!`] compiles a handler twice, once
//! with AVX2 and FMA enabled (and POPCNT, which every such CPU has: counting a mask's lanes
//! is otherwise a dozen instructions), and runs that copy when the CPU has them (asked
//! once). Both copies compute the same bits: lane loops are element-wise (no reassociation
//! across lanes), and `mul_add` is a correctly rounded fused operation either way.

/// True when the host CPU runs the AVX2+FMA(+POPCNT) copies of the handlers. Every handler call
/// asks, so the answer is kept in one byte (std's detection reads its cache once per
/// feature, with a check that the cache was filled).
#[inline(always)]
pub fn host_has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match AVX2_FMA.load(Ordering::Relaxed) {
            YES => true,
            NO => false,
            _ => detect_avx2_fma(),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
use std::sync::atomic::{AtomicU8, Ordering};
#[cfg(target_arch = "x86_64")]
const YES: u8 = 1;
#[cfg(target_arch = "x86_64")]
const NO: u8 = 2;
/// [`host_has_avx2_fma`]'s answer: YES, NO, or 0 before the first question.
#[cfg(target_arch = "x86_64")]
static AVX2_FMA: AtomicU8 = AtomicU8::new(0);

/// What [`host_has_avx2_fma`] answered, without asking: false before anything asked. The
/// handlers test this (the decoder asks before it hands them out), so that their test is a
/// load and a compare, with no call that would make them save registers on every run.
#[inline(always)]
pub fn avx2_fma_found() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        AVX2_FMA.load(Ordering::Relaxed) == YES
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Asks the CPU once; out of line so that the handlers' test stays a load and a compare.
#[cfg(target_arch = "x86_64")]
#[cold]
#[inline(never)]
fn detect_avx2_fma() -> bool {
    let has = std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("popcnt");
    AVX2_FMA.store(if has { YES } else { NO }, Ordering::Relaxed);
    has
}

/// Defines a handler (the `Handler` shape) whose body is compiled both for the baseline
/// target and with AVX2+FMA, choosing at run time. The body must be `#[inline(always)]`
/// material: everything it calls that should vectorise is `#[inline(always)]` too.
macro_rules! simd_handler {
    ($(#[$m:meta])* $vis:vis fn $name:ident($w:ident: &mut Wave, $i:ident: &Inst, $c:ident: &mut Ctx) -> $r:ty $body:block) => {
        $(#[$m])*
        $vis fn $name($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r {
            #[inline(always)]
            #[allow(unused_variables)]
            fn body($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma,popcnt")]
                fn fast($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r {
                    body($w, $i, $c)
                }
                if $crate::exec::simd::avx2_fma_found() {
                    // SAFETY: the CPU has AVX2 and FMA (found just above).
                    return unsafe { fast($w, $i, $c) };
                }
            }
            // Out of line, so that this function stays a test and a jump to one copy or
            // the other: with the body inlined here it would save registers and set up the
            // body's stack frame on every call, the fast copy's calls included.
            #[inline(never)]
            fn baseline($w: &mut Wave, $i: &Inst, $c: &mut Ctx) -> $r {
                body($w, $i, $c)
            }
            baseline($w, $i, $c)
        }
    };
}

/// The lane mask of 64 lane results that are each 0 or all ones (bit `l` is lane `l`'s top
/// bit): how compares and carries become VCC. With AVX2, eight lanes per sign-bit move;
/// the compiler's own packing of `(bool as u64) << l` shifts and ors every lane.
#[inline(always)]
pub fn mask64(lanes: &[u32; 64]) -> u64 {
    mask64_of(|l| lanes[l])
}

/// [`mask64`] of the results `lane(l)` computes, eight lanes at a time: each group of eight
/// is packed as soon as it is computed, in vector registers, instead of all 64 going to a
/// stack array first and being read back.
#[inline(always)]
pub fn mask64_of(lane: impl Fn(usize) -> u32) -> u64 {
    let mut bits = 0u64;
    #[cfg(target_arch = "x86_64")]
    if avx2_fma_found() {
        use std::arch::x86_64::*;
        for chunk in 0..8 {
            let group: [u32; 8] = std::array::from_fn(|k| lane(8 * chunk + k));
            // SAFETY: the CPU has AVX (found just above); the load reads `group` whole.
            // The intrinsics are called here rather than from a function of their own: in
            // the AVX2 copy of a handler they then inline (a separate target-feature
            // function stayed a call).
            unsafe {
                let v = _mm256_loadu_ps(group.as_ptr() as *const f32);
                bits |= (_mm256_movemask_ps(v) as u32 as u64) << (8 * chunk);
            }
        }
        return bits;
    }
    for l in 0..64 {
        bits |= ((lane(l) >> 31) as u64) << l;
    }
    bits
}

/// `out[l]` = the dword at `base + offs[l]` for all 64 lanes: the full-EXEC gather of LDS
/// reads and of global loads addressed as one origin plus 32-bit offsets. Eight lanes at a
/// time, it takes one read for a group of consecutive dwords (a tile row, a matrix column
/// block) and one read and a broadcast for a group of one address (a matrix row element
/// shared by a lane group), the scalar loop otherwise. (AVX2's gather instruction was
/// slower than the scalar loop on the Xeon this was measured on: LDS-tiled matmul fell
/// from about 1,150 to 810 M lane-instr/s.)
///
/// # Safety
/// Every `base + offs[l]` .. `+ 4` is readable.
#[inline(always)]
pub unsafe fn gather64(base: *const u8, offs: &[u32; 64], out: &mut [u32; 64]) {
    // SAFETY: the caller's contract; `out` is one output, apart from `offs`.
    unsafe { gather64_many([base], offs, [out]) }
}

/// [`gather64`] from several bases with one set of offsets (`ds_read2`'s two offsets, the
/// dwords of a wider read): each eight-lane group is classified once for all of them.
///
/// # Safety
/// Every `bases[n] + offs[l]` .. `+ 4` is readable.
#[inline(always)]
pub unsafe fn gather64_many<const N: usize>(
    bases: [*const u8; N],
    offs: &[u32; 64],
    outs: [&mut [u32; 64]; N],
) {
    #[cfg(target_arch = "x86_64")]
    if host_has_avx2_fma() {
        // SAFETY: the CPU has AVX2 (checked just above); the caller's contract.
        return unsafe { gather64_many_avx2(bases, offs, outs) };
    }
    for (base, out) in bases.into_iter().zip(outs) {
        for l in 0..64 {
            // SAFETY: the caller's contract.
            out[l] = unsafe { std::ptr::read_unaligned(base.add(offs[l] as usize) as *const u32) };
        }
    }
}

/// What eight lanes' byte offsets are: all one address, eight consecutive dwords from the
/// first lane's, or anything else.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum LaneGroup {
    OneAddress,
    Consecutive,
    Other,
}

/// The kind every group of eight lanes of `offs` is (each group's own address or run of
/// consecutive dwords), or `Other` where the groups differ or any is neither.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify64(offs: &[u32; 64]) -> LaneGroup {
    use std::arch::x86_64::*;
    let ramp = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    let (mut spread, mut off_ramp) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for chunk in 0..8 {
        // SAFETY: eight lanes inside the array (chunk < 8); the CPU has AVX2 (the caller).
        unsafe {
            let o = _mm256_loadu_si256(offs.as_ptr().add(8 * chunk) as *const __m256i);
            let step = _mm256_sub_epi32(o, _mm256_broadcastd_epi32(_mm256_castsi256_si128(o)));
            spread = _mm256_or_si256(spread, step);
            off_ramp = _mm256_or_si256(off_ramp, _mm256_xor_si256(step, ramp));
        }
    }
    if _mm256_testz_si256(spread, spread) != 0 {
        LaneGroup::OneAddress
    } else if _mm256_testz_si256(off_ramp, off_ramp) != 0 {
        LaneGroup::Consecutive
    } else {
        LaneGroup::Other
    }
}

/// Classifies the eight offsets from `offs[8 * chunk]` in vector registers (the compiler's
/// own vectorisation of it went through memory and stalled).
///
/// # Safety
/// The CPU has AVX2; `chunk < 8`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify8(offs: &[u32; 64], chunk: usize) -> (LaneGroup, usize) {
    use std::arch::x86_64::*;
    // SAFETY: eight lanes inside the array (chunk < 8); the CPU has AVX2 (the caller).
    unsafe {
        let o = _mm256_loadu_si256(offs.as_ptr().add(8 * chunk) as *const __m256i);
        let step = _mm256_sub_epi32(o, _mm256_broadcastd_epi32(_mm256_castsi256_si128(o)));
        let ramp_diff = _mm256_xor_si256(step, _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
        let group = if _mm256_testz_si256(step, step) != 0 {
            LaneGroup::OneAddress
        } else if _mm256_testz_si256(ramp_diff, ramp_diff) != 0 {
            LaneGroup::Consecutive
        } else {
            LaneGroup::Other
        };
        (group, _mm256_cvtsi256_si32(o) as u32 as usize)
    }
}

/// [`gather64_many`] eight lanes at a time, by [`classify8`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather64_many_avx2<const N: usize>(
    bases: [*const u8; N],
    offs: &[u32; 64],
    mut outs: [&mut [u32; 64]; N],
) {
    use std::arch::x86_64::*;
    // One kind of group across the wave (a tile's rows, a row element per lane group) is
    // the common case: told apart in one pass, its copy loop tests nothing per group.
    // SAFETY: the CPU has AVX2 (the caller).
    match unsafe { classify64(offs) } {
        LaneGroup::Other => {}
        whole => {
            for chunk in 0..8 {
                let first = offs[8 * chunk] as usize;
                for (base, out) in bases.iter().zip(outs.iter_mut()) {
                    // SAFETY: as below: every lane's dword is readable, so is the group's
                    // first lane's, and for consecutive offsets the eight dwords from it.
                    unsafe {
                        let p = base.add(first);
                        let v = if whole == LaneGroup::OneAddress {
                            _mm256_set1_epi32(std::ptr::read_unaligned(p as *const i32))
                        } else {
                            _mm256_loadu_si256(p as *const __m256i)
                        };
                        _mm256_storeu_si256(out.as_mut_ptr().add(8 * chunk) as *mut __m256i, v);
                    }
                }
            }
            return;
        }
    }
    for chunk in 0..8 {
        // SAFETY: chunk < 8; the CPU has AVX2 (the caller).
        let (group, first) = unsafe { classify8(offs, chunk) };
        for (base, out) in bases.iter().zip(outs.iter_mut()) {
            // SAFETY: eight lanes inside both arrays; every lane's dword is readable (the
            // caller), so is the first lane's, and for consecutive offsets the eight dwords
            // from the first lane's are the lanes' own.
            unsafe {
                let p = base.add(first);
                let v = if group == LaneGroup::OneAddress {
                    _mm256_set1_epi32(std::ptr::read_unaligned(p as *const i32))
                } else if group == LaneGroup::Consecutive {
                    _mm256_loadu_si256(p as *const __m256i)
                } else {
                    let lanes = &offs[8 * chunk..8 * chunk + 8];
                    let v: [u32; 8] = std::array::from_fn(|j| {
                        std::ptr::read_unaligned(base.add(lanes[j] as usize) as *const u32)
                    });
                    _mm256_loadu_si256(v.as_ptr() as *const __m256i)
                };
                _mm256_storeu_si256(out.as_mut_ptr().add(8 * chunk) as *mut __m256i, v);
            }
        }
    }
}

/// EXEC as one 0-or-all-ones word per lane, for lane loops that select by it: testing
/// `exec >> l & 1` in a vectorised loop makes the compiler expand the mask four lanes at a
/// time on every use.
#[inline(always)]
pub fn lane_masks(exec: u64) -> [u32; 64] {
    // In 32-bit halves, so that each lane's bit is a 32-bit shift (one vector shift by
    // per-lane counts for eight lanes).
    let halves = [exec as u32, (exec >> 32) as u32];
    std::array::from_fn(|l| 0u32.wrapping_sub((halves[l >> 5] >> (l & 31)) & 1))
}

/// The dword of `vals[l]` to `base + offs[l]` for all 64 lanes, lane after lane as the
/// hardware orders them (where lanes overlap, the last one's value stays): the full-EXEC
/// scatter of LDS writes, eight lanes at a time as [`gather64`] reads them.
///
/// # Safety
/// Every `base + offs[l]` .. `+ 4` is writable and none overlaps `offs` or `vals`.
#[inline(always)]
pub unsafe fn scatter64(base: *mut u8, offs: &[u32; 64], vals: &[u32; 64]) {
    #[cfg(target_arch = "x86_64")]
    if host_has_avx2_fma() {
        // SAFETY: the CPU has AVX2 (checked just above); the caller's contract.
        return unsafe { scatter64_avx2(base, offs, vals) };
    }
    for l in 0..64 {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_unaligned(base.add(offs[l] as usize) as *mut u32, vals[l]) };
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scatter64_avx2(base: *mut u8, offs: &[u32; 64], vals: &[u32; 64]) {
    use std::arch::x86_64::*;
    for chunk in 0..8 {
        // SAFETY: eight lanes inside both arrays; every lane's dword is writable (the
        // caller); for one address the last lane's value is what the lanes in order
        // leave, and consecutive dwords from the first lane's are the lanes' own.
        unsafe {
            let (group, first) = classify8(offs, chunk);
            let p = base.add(first);
            let lanes = &vals[8 * chunk..8 * chunk + 8];
            if group == LaneGroup::Consecutive {
                let v = _mm256_loadu_si256(lanes.as_ptr() as *const __m256i);
                _mm256_storeu_si256(p as *mut __m256i, v);
            } else if group == LaneGroup::OneAddress {
                std::ptr::write_unaligned(p as *mut u32, lanes[7]);
            } else {
                for j in 0..8 {
                    let at = offs[8 * chunk + j] as usize;
                    std::ptr::write_unaligned(base.add(at) as *mut u32, lanes[j]);
                }
            }
        }
    }
}

/// `out[l] = data[(addr[l] + imm) / 4 % 64]` for all 64 lanes: `ds_bpermute_b32` under a
/// full EXEC, the shuffle of wave reductions and `__shfl*`. With AVX2, an eight-lane group
/// whose lanes all pull from one source group (every xor or rotate shuffle by a multiple of
/// eight lanes, shuffles within groups, broadcasts) is one permute instruction; any other
/// pattern takes the lane loop.
#[inline(always)]
pub fn pull64(data: &[u32; 64], addr: &[u32; 64], imm: u32) -> [u32; 64] {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma_found() {
        use std::arch::x86_64::*;
        let mut out = [0u32; 64];
        // SAFETY: the CPU has AVX2 (found just above); each load and store moves one whole
        // eight-lane group of a 64-lane array, and the source group is below 8.
        let permuted = unsafe {
            let imm = _mm256_set1_epi32(imm as i32);
            let seven = _mm256_set1_epi32(7);
            let mut all = true;
            for g in 0..8 {
                let a = _mm256_loadu_si256(addr.as_ptr().add(8 * g) as *const __m256i);
                let lane = _mm256_srli_epi32::<2>(_mm256_add_epi32(a, imm));
                let group = _mm256_and_si256(_mm256_srli_epi32::<3>(lane), seven);
                let first = _mm256_permutevar8x32_epi32(group, _mm256_setzero_si256());
                if _mm256_movemask_epi8(_mm256_cmpeq_epi32(group, first)) != -1 {
                    all = false;
                    break;
                }
                let from = _mm256_cvtsi256_si32(group) as usize;
                let src = _mm256_loadu_si256(data.as_ptr().add(8 * from) as *const __m256i);
                // vpermd takes the low three bits of each lane's index.
                let r = _mm256_permutevar8x32_epi32(src, lane);
                _mm256_storeu_si256(out.as_mut_ptr().add(8 * g) as *mut __m256i, r);
            }
            all
        };
        if permuted {
            return out;
        }
    }
    std::array::from_fn(|l| data[((addr[l].wrapping_add(imm) >> 2) & 63) as usize])
}

#[cfg(test)]
mod tests {
    use super::{gather64, pull64, scatter64};

    /// Eight-lane groups of byte offsets into a 1 KiB buffer: the forms gather64 and
    /// scatter64 tell apart (one address, consecutive dwords, anything else), near misses of
    /// both included.
    const GROUPS: [[u32; 8]; 9] = [
        [40; 8],
        [0, 4, 8, 12, 16, 20, 24, 28],
        [988, 992, 996, 1000, 1004, 1008, 1012, 1016],
        [0, 4, 8, 12, 16, 20, 24, 32],
        [40, 40, 40, 40, 40, 40, 40, 44],
        [28, 24, 20, 16, 12, 8, 4, 0],
        [1, 5, 9, 13, 17, 21, 25, 29],
        [0, 8, 16, 24, 32, 40, 48, 56],
        [3, 900, 17, 17, 0, 1020, 511, 64],
    ];

    /// The 64 lanes' offsets: the groups in turn, starting at group `rot`.
    fn lane_offsets(rot: usize) -> [u32; 64] {
        std::array::from_fn(|l| GROUPS[(l / 8 + rot) % GROUPS.len()][l % 8])
    }

    /// Offset sets to gather with: every rotation of the groups, and waves whose eight
    /// groups are all of one form (each its own address, or its own run), with one group
    /// of another form or a near miss in the last place.
    fn offset_sets() -> Vec<[u32; 64]> {
        let one = |g: usize| [40 + 100 * g as u32; 8];
        let run =
            |g: usize| std::array::from_fn::<u32, 8, _>(|k| 8 + 120 * g as u32 + 4 * k as u32);
        let wave = |group: &dyn Fn(usize) -> [u32; 8]| -> [u32; 64] {
            std::array::from_fn(|l| group(l / 8)[l % 8])
        };
        let mut sets: Vec<[u32; 64]> = (0..GROUPS.len()).map(lane_offsets).collect();
        sets.push(wave(&one));
        sets.push(wave(&run));
        for last in [run(7), GROUPS[3], GROUPS[4], GROUPS[8]] {
            sets.push(wave(&|g| if g < 7 { one(g) } else { last }));
        }
        for last in [one(7), GROUPS[3], GROUPS[4], GROUPS[8]] {
            sets.push(wave(&|g| if g < 7 { run(g) } else { last }));
        }
        sets
    }

    /// Every group form reads what the lane-by-lane loop reads.
    #[test]
    fn gather64_matches_lane_by_lane_reads() {
        let mem: Vec<u8> = (0..1024u32).map(|x| (x * 7 + x / 251) as u8).collect();
        for (set, offs) in offset_sets().into_iter().enumerate() {
            let mut out = [0u32; 64];
            // SAFETY: every offset + 4 <= 1024, the buffer's length.
            unsafe { gather64(mem.as_ptr(), &offs, &mut out) };
            for l in 0..64 {
                let o = offs[l] as usize;
                let want = u32::from_le_bytes(mem[o..o + 4].try_into().unwrap());
                assert_eq!(out[l], want, "set {set}, lane {l}, offset {o}");
            }
        }
    }

    /// gather64_many reads for each base what gather64 reads from it alone.
    #[test]
    fn gather64_many_matches_one_gather_per_base() {
        let mem: Vec<u8> = (0..2048u32).map(|x| (x * 13 + x / 7) as u8).collect();
        for (set, offs) in offset_sets().into_iter().enumerate() {
            let bases = [mem.as_ptr(), mem[1000..].as_ptr()];
            let (mut a, mut b) = ([0u32; 64], [0u32; 64]);
            // SAFETY: every offset + 4 <= 1024, and 1000 + 1024 <= 2048.
            unsafe { super::gather64_many(bases, &offs, [&mut a, &mut b]) };
            for (base, got) in bases.into_iter().zip([a, b]) {
                let mut want = [0u32; 64];
                // SAFETY: as above.
                unsafe { gather64(base, &offs, &mut want) };
                assert_eq!(got, want, "set {set}");
            }
        }
    }

    /// EXEC patterns: none, all, single lanes at the edges of the halves and bytes, whole
    /// and partial eight-lane groups, and an irregular one.
    const MASKS: [u64; 9] = [
        0,
        u64::MAX,
        1,
        1 << 63,
        1 << 31 | 1 << 32,
        0x00ff_0000_ff00_00ff,
        0x0f0f_f0f0_8001_7ffe,
        0xffff_ffff_0000_0000,
        0x9e37_79b9_7f4a_7c15,
    ];

    /// lane_masks and mask64 are inverses, and agree with the bit tests they replace.
    #[test]
    fn lane_masks_and_mask64_follow_the_bits() {
        for exec in MASKS {
            let lanes = super::lane_masks(exec);
            for (l, &v) in lanes.iter().enumerate() {
                assert_eq!(
                    v,
                    if exec >> l & 1 != 0 { u32::MAX } else { 0 },
                    "{exec:#x} lane {l}"
                );
            }
            assert_eq!(super::mask64(&lanes), exec);
            // mask64 reads only each lane's top bit.
            let tops: [u32; 64] = std::array::from_fn(|l| (lanes[l] & 0x8000_0000) | l as u32);
            assert_eq!(super::mask64(&tops), exec);
        }
    }

    /// As above for scatter64, lanes written in order where they overlap.
    #[test]
    fn scatter64_matches_lane_by_lane_writes() {
        for rot in 0..GROUPS.len() {
            let offs = lane_offsets(rot);
            let vals: [u32; 64] = std::array::from_fn(|l| 0x0101_0101 * (l as u32 + 1));
            let mut got = vec![0u8; 1024];
            let mut want = vec![0u8; 1024];
            // SAFETY: every offset + 4 <= 1024, the buffer's length.
            unsafe { scatter64(got.as_mut_ptr(), &offs, &vals) };
            for l in 0..64 {
                let o = offs[l] as usize;
                want[o..o + 4].copy_from_slice(&vals[l].to_le_bytes());
            }
            assert_eq!(got, want, "rotation {rot}");
        }
    }

    /// pull64 reads what the lane-by-lane formula reads: xor shuffles by every lane
    /// distance, rotations, broadcasts, within-group shuffles, offsets that wrap past 64
    /// lanes or are not multiples of 4, and scattered lanes (the lane loop).
    #[test]
    fn pull64_matches_lane_by_lane_reads() {
        // Asked once, so that pull64 takes its AVX2 path where the host has it.
        super::host_has_avx2_fma();
        let data: [u32; 64] = std::array::from_fn(|l| 0x5000 + 7 * l as u32);
        let mut patterns: Vec<[u32; 64]> = Vec::new();
        for k in 0..64u32 {
            patterns.push(std::array::from_fn(|l| 4 * (l as u32 ^ k)));
            patterns.push(std::array::from_fn(|l| 4 * (l as u32 + k)));
            patterns.push(std::array::from_fn(|l| 4 * (l as u32 + k) + 256 * k + 3));
        }
        patterns.push([4 * 17; 64]);
        patterns.push(std::array::from_fn(|l| {
            4 * (l as u32 & !7 | (7 - l as u32 % 8))
        }));
        patterns.push(std::array::from_fn(|l| {
            (l as u32).wrapping_mul(2654435761) >> 7
        }));
        let mut near_miss: [u32; 64] = std::array::from_fn(|l| 4 * (l as u32 ^ 8));
        near_miss[61] = 4 * 3;
        patterns.push(near_miss);
        for (n, addr) in patterns.iter().enumerate() {
            for imm in [0u32, 4, 0xfffc] {
                let got = pull64(&data, addr, imm);
                for l in 0..64 {
                    let want = data[((addr[l].wrapping_add(imm) >> 2) & 63) as usize];
                    assert_eq!(got[l], want, "pattern {n}, imm {imm}, lane {l}");
                }
            }
        }
    }
}
