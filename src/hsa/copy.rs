//! The HSA runtime's copy engines (SDMA): copies between memory two agents can reach, and
//! fills. Which engine takes a copy is chosen here when the runtime lets us choose
//! (`hsa_amd_memory_async_copy_on_engine`, ROCm 5.6 and later); otherwise the runtime places
//! it.

use super::{check, HsaApi, HsaError};
use hsa_abi::*;
use std::ffi::c_void;

/// One copy: `len` bytes from `src`, reached through `src_agent`, to `dst`, through
/// `dst_agent` (addresses as those agents see them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineCopy {
    pub dst: usize,
    pub dst_agent: hsa_agent_t,
    pub src: usize,
    pub src_agent: hsa_agent_t,
    pub len: usize,
}

/// The copy engines of the HSA runtime the shim uses.
#[derive(Clone, Copy)]
pub struct CopyEngines {
    api: &'static HsaApi,
}

impl CopyEngines {
    pub fn new(api: &'static HsaApi) -> CopyEngines {
        CopyEngines { api }
    }

    /// Starts `copy` once every signal of `deps` reads 0; the engine decrements `completion`
    /// by one when the copy is done. With `preferred` (an engine's bit) the copy goes to that
    /// engine if it is free between the two agents, else to the first free one, where the
    /// runtime lets us choose; returns the engine used, or `None` when the runtime placed the
    /// copy (always so without `preferred`).
    ///
    /// # Safety
    /// Both ranges are reachable by their agents and cover `len` bytes until the copy is done;
    /// `deps` and `completion` are live signals.
    pub unsafe fn start(
        &self,
        copy: &EngineCopy,
        deps: &[hsa_signal_t],
        completion: hsa_signal_t,
        preferred: Option<u32>,
    ) -> Result<Option<u32>, HsaError> {
        let api = self.api;
        if let (Some(preferred), Some(on_engine)) =
            (preferred, api.hsa_amd_memory_async_copy_on_engine)
        {
            if let Some(engine) = self.free_engines(copy).map(|free| choose(free, preferred)) {
                // SAFETY: per this function's contract.
                let status = unsafe {
                    on_engine(
                        copy.dst as *mut c_void,
                        copy.dst_agent,
                        copy.src as *const c_void,
                        copy.src_agent,
                        copy.len,
                        deps.len() as u32,
                        deps.as_ptr(),
                        completion,
                        engine,
                        false,
                    )
                };
                return check("hsa_amd_memory_async_copy_on_engine", status).map(|()| Some(engine));
            }
        }
        // SAFETY: per this function's contract.
        let status = unsafe {
            (api.hsa_amd_memory_async_copy)(
                copy.dst as *mut c_void,
                copy.dst_agent,
                copy.src as *const c_void,
                copy.src_agent,
                copy.len,
                deps.len() as u32,
                deps.as_ptr(),
                completion,
            )
        };
        check("hsa_amd_memory_async_copy", status).map(|()| None)
    }

    /// The engines (a bit each) free for copies between the two agents of `copy`; `None` when
    /// the runtime cannot say or none is free.
    fn free_engines(&self, copy: &EngineCopy) -> Option<u32> {
        let status_of = self.api.hsa_amd_memory_copy_engine_status?;
        let mut mask = 0u32;
        // SAFETY: valid agents and out-pointer.
        let status = unsafe { status_of(copy.dst_agent, copy.src_agent, &mut mask) };
        (status == status::SUCCESS && mask != 0).then_some(mask)
    }

    /// Writes `words` copies of the 32-bit `word` from `dst` on.
    ///
    /// # Safety
    /// `[dst, dst + 4 * words)` is memory the runtime can fill (a device allocation, or
    /// memory devices can reach) and `dst` is 4-byte aligned.
    pub unsafe fn fill(&self, dst: usize, word: u32, words: usize) -> Result<(), HsaError> {
        // SAFETY: per this function's contract.
        let status = unsafe { (self.api.hsa_amd_memory_fill)(dst as *mut c_void, word, words) };
        check("hsa_amd_memory_fill", status)
    }
}

/// The engine to use out of the free ones (`free`, non-zero): `preferred` if it is free, else
/// the lowest.
fn choose(free: u32, preferred: u32) -> u32 {
    if free & preferred != 0 {
        preferred
    } else {
        1 << free.trailing_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::choose;

    #[test]
    fn the_preferred_engine_is_used_when_free_else_the_lowest_free_one() {
        assert_eq!(choose(0b11, 0b10), 0b10);
        assert_eq!(choose(0b01, 0b10), 0b01);
        assert_eq!(choose(0b1100, 0b01), 0b100);
    }
}
