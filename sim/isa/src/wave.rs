//! Architectural state of one wave64 and the operand accessors the handlers use.

pub use crate::cache_line::LineBytes;
use crate::gws::GwsRequest;
use crate::inst::FloatKind;
use hsasim_vtime::Mix;

/// Operand codes of the special scalar registers (GFX9 source encoding).
pub const VCC_LO: usize = 106;
pub const M0: usize = 124;
pub const EXEC_LO: usize = 126;
pub const FLAT_SCRATCH_LO: usize = 102;

/// Number of lanes in a wave.
pub const LANES: usize = 64;

/// One VGPR: a dword per lane.
pub type Lanes = [u32; LANES];

/// Where a wave stands in its workgroup's cooperative schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveState {
    Running,
    AtBarrier,
    /// Waiting at a GWS barrier (cooperative dispatches).
    AtGws,
    Ended,
}

/// 256 VGPRs followed by 256 AGPRs (gfx90a/gfx942 unified register file), on cache-line
/// boundaries: a register's 64 lanes fill two whole lines (no 32-byte lane group of a
/// vector loop straddles two), and no other allocation, maybe another worker's, shares a
/// line with the file.
#[repr(C, align(128))]
pub struct RegisterFile(pub [Lanes; 512]);

impl RegisterFile {
    /// A zeroed file, made on the heap (it is 128 KiB: too large for a thread's stack).
    pub fn zeroed() -> Box<RegisterFile> {
        let layout = std::alloc::Layout::new::<RegisterFile>();
        // SAFETY: the layout has a non-zero size; all-zero bytes are a valid RegisterFile
        // (u32s); the pointer comes from the global allocator with RegisterFile's layout,
        // as Box requires. A failed allocation goes to `handle_alloc_error`, as Box::new's.
        unsafe {
            let ptr = std::alloc::alloc_zeroed(layout) as *mut RegisterFile;
            if ptr.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(ptr)
        }
    }
}

impl std::ops::Deref for RegisterFile {
    type Target = [Lanes];
    #[inline(always)]
    fn deref(&self) -> &[Lanes] {
        &self.0
    }
}

impl std::ops::DerefMut for RegisterFile {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Lanes] {
        &mut self.0
    }
}

/// Register file and control state of one wave. Aligned to cache lines, so that the scalar
/// registers and the PC, written by nearly every instruction, share no line with another
/// worker's waves or buffers.
#[repr(align(128))]
pub struct Wave {
    /// Scalar registers indexed by operand code 0..=127: s0..s101, flat_scratch, xnack_mask,
    /// VCC (106/107), trap temporaries, M0 (124), EXEC (126/127). Keeping the special
    /// registers in the same array makes every scalar operand read a plain index.
    pub s: [u32; 128],
    pub v: Box<RegisterFile>,
    pub pc: u64,
    pub scc: bool,
    pub mode: u32,
    pub trapsts: u32,
    pub state: WaveState,
    /// Index of the wave within its workgroup.
    pub id: u32,
    /// Per-lane private (scratch) memory: `scratch_per_lane` bytes for each of 64 lanes.
    pub scratch: LineBytes,
    pub scratch_per_lane: u64,
    /// Lane-instructions executed (active lanes summed over VALU instructions) for figures.
    pub lane_ops: u64,
    /// Instructions this wave has executed (for the watchdog).
    pub executed: u64,
    /// What it executed, by virtual-time class (issue 42): the run loop and translated
    /// regions add each instruction before it runs, so a handler sees itself counted. The
    /// run loop counts only when the dispatch wants the counts (virtual time, or figures
    /// asked for); translated regions always do (they serve every dispatch of a kernel).
    pub mix: Mix,
    /// The `ds_gws_*` operation of the last [`Step::Gws`](crate::exec::Step::Gws).
    pub gws: GwsRequest,
}

impl Wave {
    pub fn new() -> Wave {
        Wave {
            s: [0; 128],
            v: RegisterFile::zeroed(),
            pc: 0,
            scc: false,
            mode: 0,
            trapsts: 0,
            state: WaveState::Running,
            id: 0,
            scratch: LineBytes::empty(),
            scratch_per_lane: 0,
            lane_ops: 0,
            executed: 0,
            mix: Mix::default(),
            gws: GwsRequest::default(),
        }
    }

    #[inline(always)]
    pub fn exec(&self) -> u64 {
        self.s[EXEC_LO] as u64 | (self.s[EXEC_LO + 1] as u64) << 32
    }

    #[inline(always)]
    pub fn set_exec(&mut self, v: u64) {
        self.s[EXEC_LO] = v as u32;
        self.s[EXEC_LO + 1] = (v >> 32) as u32;
    }

    #[inline(always)]
    pub fn vcc(&self) -> u64 {
        self.sreg64(VCC_LO as u16)
    }

    /// Reads a 64-bit scalar register pair by code (pairs are even-aligned in valid code;
    /// an odd or out-of-range index reads what the array holds, never out of bounds).
    #[inline(always)]
    pub fn sreg64(&self, code: u16) -> u64 {
        let c = (code & 127) as usize;
        let hi = if c < 127 { self.s[c + 1] } else { 0 };
        self.s[c] as u64 | (hi as u64) << 32
    }

    /// Writes a scalar destination. Codes above 127 (constants) are not writable: ignored,
    /// as the hardware ignores writes to read-only operands.
    #[inline(always)]
    pub fn write_s32(&mut self, code: u16, v: u32) {
        if code < 128 {
            self.s[code as usize] = v;
        }
    }

    #[inline(always)]
    pub fn write_s64(&mut self, code: u16, v: u64) {
        if code < 127 {
            self.s[code as usize] = v as u32;
            self.s[code as usize + 1] = (v >> 32) as u32;
        }
    }

    /// A 32-bit scalar-path source: SGPR, special register or constant.
    #[inline(always)]
    pub fn sread32(&self, code: u16, lit: u32, fk: FloatKind) -> u32 {
        match code {
            0..=127 => self.s[code as usize],
            128..=208 => inline_int(code) as u32,
            240..=248 => inline_float(code, fk) as u32,
            // Aperture bases: hsasim has a flat address space, so LDS and private addresses
            // never alias global ones; report apertures the flat path recognises.
            235 => (crate::aperture::SHARED_APERTURE >> 32) as u32,
            236 => (crate::aperture::SHARED_APERTURE >> 32) as u32,
            237 => (crate::aperture::PRIVATE_APERTURE >> 32) as u32,
            238 => (crate::aperture::PRIVATE_APERTURE >> 32) as u32,
            251 => (self.vcc() == 0) as u32,
            252 => (self.exec() == 0) as u32,
            253 => self.scc as u32,
            255 => lit,
            _ => 0,
        }
    }

    /// A 64-bit scalar-path source.
    #[inline(always)]
    pub fn sread64(&self, code: u16, lit: u32, fk: FloatKind) -> u64 {
        match code {
            0..=127 => self.sreg64(code),
            128..=208 => inline_int(code) as u64,
            240..=248 => inline_float(code, fk),
            235 | 236 => crate::aperture::SHARED_APERTURE,
            237 | 238 => crate::aperture::PRIVATE_APERTURE,
            251 => (self.vcc() == 0) as u64,
            252 => (self.exec() == 0) as u64,
            253 => self.scc as u64,
            // Scalar 64-bit operands are integers: the literal zero-extends.
            255 => lit as u64,
            _ => 0,
        }
    }

    /// Reads a 32-bit vector source for all lanes.
    #[inline(always)]
    pub fn vread32(&self, code: u16, lit: u32, fk: FloatKind, out: &mut Lanes) {
        if code >= 256 {
            *out = self.v[(code as usize - 256) & 511];
        } else {
            *out = [self.sread32(code, lit, fk); LANES];
        }
    }

    /// Reads a 64-bit vector source (register pair) for all lanes.
    #[inline(always)]
    pub fn vread64(&self, code: u16, lit: u32, fk: FloatKind, out: &mut [u64; LANES]) {
        if code >= 256 {
            let r = (code as usize - 256) & 511;
            let lo = &self.v[r];
            let hi = &self.v[(r + 1) & 511];
            for l in 0..LANES {
                out[l] = lo[l] as u64 | (hi[l] as u64) << 32;
            }
        } else {
            let v = if code == 255 && fk == FloatKind::F64 {
                (lit as u64) << 32
            } else {
                self.sread64(code, lit, fk)
            };
            *out = [v; LANES];
        }
    }

    /// Writes a VGPR (code 256..) under `mask`.
    #[inline(always)]
    pub fn vwrite32(&mut self, code: u16, mask: u64, vals: &Lanes) {
        let dst = &mut self.v[(code as usize).wrapping_sub(256) & 511];
        if mask == u64::MAX {
            *dst = *vals;
        } else {
            for l in 0..LANES {
                if mask >> l & 1 != 0 {
                    dst[l] = vals[l];
                }
            }
        }
    }

    #[inline(always)]
    pub fn vwrite64(&mut self, code: u16, mask: u64, vals: &[u64; LANES]) {
        let r = (code as usize).wrapping_sub(256) & 511;
        let r1 = (r + 1) & 511;
        if mask == u64::MAX {
            let lo = &mut self.v[r];
            for l in 0..LANES {
                lo[l] = vals[l] as u32;
            }
            let hi = &mut self.v[r1];
            for l in 0..LANES {
                hi[l] = (vals[l] >> 32) as u32;
            }
            return;
        }
        for l in 0..LANES {
            if mask >> l & 1 != 0 {
                self.v[r][l] = vals[l] as u32;
            }
        }
        for l in 0..LANES {
            if mask >> l & 1 != 0 {
                self.v[r1][l] = (vals[l] >> 32) as u32;
            }
        }
    }

    /// One lane of a VGPR by index (0..511) wrapping instead of failing.
    #[inline(always)]
    pub fn vlane(&self, reg: usize, lane: usize) -> u32 {
        self.v[reg & 511][lane & 63]
    }

    #[inline(always)]
    pub fn set_vlane(&mut self, reg: usize, lane: usize, v: u32) {
        self.v[reg & 511][lane & 63] = v;
    }
}

impl Default for Wave {
    fn default() -> Self {
        Wave::new()
    }
}

/// Integer inline constants: 128 => 0, 129..=192 => 1..=64, 193..=208 => -1..=-16.
#[inline(always)]
pub fn inline_int(code: u16) -> i64 {
    match code {
        128..=192 => code as i64 - 128,
        193..=208 => 192 - code as i64,
        _ => 0,
    }
}

/// Float inline constants as bit patterns of the operand's size.
#[inline(always)]
pub fn inline_float(code: u16, fk: FloatKind) -> u64 {
    let i = (code - 240) as usize;
    const F32: [u32; 9] = [
        0x3f00_0000,
        0xbf00_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x4000_0000,
        0xc000_0000,
        0x4080_0000,
        0xc080_0000,
        0x3e22_f983,
    ];
    const F64: [u64; 9] = [
        0x3fe0_0000_0000_0000,
        0xbfe0_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x4000_0000_0000_0000,
        0xc000_0000_0000_0000,
        0x4010_0000_0000_0000,
        0xc010_0000_0000_0000,
        0x3fc4_5f30_6dc9_c882,
    ];
    const F16: [u16; 9] = [
        0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
    ];
    match fk {
        FloatKind::F32 => F32[i.min(8)] as u64,
        FloatKind::F64 | FloatKind::I64 => F64[i.min(8)],
        FloatKind::F16 => F16[i.min(8)] as u64,
    }
}
