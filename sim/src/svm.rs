//! Shared virtual memory ranges: the attributes `hsa_amd_svm_attributes_set/get` record, as
//! AMD's HIP runtime uses them for `hipMallocManaged`, `hipMemAdvise` and
//! `hipMemRangeGetAttribute`.
//!
//! The simulated parts run xnack- (`HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT` is
//! false): a GPU may touch plain host memory only after the range was made accessible to it
//! (`HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE` or `..._IN_PLACE`). That registers the range with
//! the memory registry (kind `Svm`); `..._AGENT_NO_ACCESS` for every GPU removes it. The
//! other attributes (memory model, read-only, preferred location, ...) are recorded per
//! range and reported back; they change nothing else, since host and device share memory.
//! Ranges are page-aligned outward, as the header specifies. The newest range containing an
//! address answers queries about it.

//!
//! The state of the runtime's SVM ranges and the rules for them; the exported shells
//! (`api/svm.rs`) only convert the C arguments.

use crate::error::{HsaError, HsaResult};
use crate::host_map::{round_up, PAGE};
use crate::memory::{Region, RegionKind};
use crate::platform::Platform;
use hsa_abi::*;
use parking_lot::Mutex;
use std::collections::BTreeMap;

const ATTRIB_GLOBAL_FLAG: u64 = 0;
const ATTRIB_READ_ONLY: u64 = 1;
const ATTRIB_HIVE_LOCAL: u64 = 2;
const ATTRIB_MIGRATION_GRANULARITY: u64 = 3;
const ATTRIB_PREFERRED_LOCATION: u64 = 4;
const ATTRIB_PREFETCH_LOCATION: u64 = 5;
const ATTRIB_READ_MOSTLY: u64 = 6;
const ATTRIB_AGENT_ACCESSIBLE: u64 = 0x200;
const ATTRIB_AGENT_ACCESSIBLE_IN_PLACE: u64 = 0x201;
const ATTRIB_AGENT_NO_ACCESS: u64 = 0x202;
const ATTRIB_ACCESS_QUERY: u64 = 0x203;
/// `HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED` / `_COARSE_GRAINED`.
const MODEL_FINE: u64 = 0;
const MODEL_COARSE: u64 = 1;

pub use hsa_abi::hsa_amd_svm_attribute_pair_t as AttributePair;

/// The recorded attributes of one page-aligned range.
#[derive(Clone, Debug)]
struct SvmRange {
    start: u64,
    end: u64,
    model: u64,
    read_only: bool,
    hive_local: bool,
    granularity: u64,
    preferred: u64,
    prefetch: u64,
    read_mostly: bool,
    /// Agent handle -> ATTRIB_AGENT_ACCESSIBLE / _IN_PLACE / _NO_ACCESS.
    access: BTreeMap<u64, u64>,
}

impl SvmRange {
    fn new(start: u64, end: u64) -> Self {
        SvmRange {
            start,
            end,
            model: MODEL_FINE,
            read_only: false,
            hive_local: false,
            granularity: 9, // 2 MiB in 4 KiB pages, KFD's default
            preferred: 0,
            prefetch: 0,
            read_mostly: false,
            access: BTreeMap::new(),
        }
    }
    fn gpu_accessible(&self, platform: &Platform<'_>) -> bool {
        self.access.iter().any(|(agent, how)| {
            *how != ATTRIB_AGENT_NO_ACCESS
                && platform
                    .agent(hsa_agent_t { handle: *agent })
                    .is_ok_and(|a| a.is_gpu())
        })
    }
}

/// The page range of `[ptr, ptr + size)`, aligned outward.
pub fn page_range(ptr: u64, size: u64) -> HsaResult<(u64, u64)> {
    if ptr == 0 || size == 0 {
        return Err(HsaError::INVALID_ARGUMENT);
    }
    let start = ptr / PAGE * PAGE;
    let end = ptr
        .checked_add(size)
        .and_then(|e| round_up(e, PAGE))
        .ok_or(HsaError::INVALID_ARGUMENT)?;
    Ok((start, end))
}

/// The runtime's SVM attribute ranges, newest last.
#[derive(Default)]
pub struct SvmRanges {
    ranges: Mutex<Vec<SvmRange>>,
}

impl SvmRanges {
    /// Records the attributes of `list` for the page range `[start, end)`; access attributes
    /// for GPU agents make the range device-accessible.
    pub fn set(
        &self,
        platform: &Platform<'_>,
        start: u64,
        end: u64,
        list: &[AttributePair],
    ) -> HsaResult {
        let mut svm = self.ranges.lock();
        let mut range = svm
            .iter()
            .rev()
            .find(|r| r.start <= start && end <= r.end)
            .cloned()
            .map(|mut r| {
                r.start = start;
                r.end = end;
                r
            })
            .unwrap_or_else(|| SvmRange::new(start, end));
        for p in list.iter() {
            let agent = || {
                platform
                    .agent(hsa_agent_t { handle: p.value })
                    .map(|_| p.value)
            };
            match p.attribute {
                ATTRIB_GLOBAL_FLAG if p.value == MODEL_FINE || p.value == MODEL_COARSE => {
                    range.model = p.value
                }
                ATTRIB_READ_ONLY => range.read_only = p.value != 0,
                ATTRIB_HIVE_LOCAL => range.hive_local = p.value != 0,
                ATTRIB_MIGRATION_GRANULARITY if p.value < 64 => range.granularity = p.value,
                ATTRIB_PREFERRED_LOCATION => {
                    range.preferred = if p.value == 0 { 0 } else { agent()? }
                }
                ATTRIB_READ_MOSTLY => range.read_mostly = p.value != 0,
                ATTRIB_AGENT_ACCESSIBLE
                | ATTRIB_AGENT_ACCESSIBLE_IN_PLACE
                | ATTRIB_AGENT_NO_ACCESS => {
                    range.access.insert(agent()?, p.attribute);
                }
                other => {
                    tracing::error!(target: "hsasim", attribute = other, value = p.value, "hsa_amd_svm_attributes_set: attribute or value not settable");
                    return Err(HsaError::INVALID_ARGUMENT);
                }
            }
        }
        let accessible = range.gpu_accessible(platform);
        // As KFD refuses ranges with no mapping behind them: a GPU given access to a hole
        // would fault the process on its first touch (a kernel's or a copy engine's).
        if accessible {
            if let Err(page) = crate::host_map::host_range_mapped(start, end - start) {
                tracing::error!(target: "hsasim", start = format_args!("{start:#x}"), end = format_args!("{end:#x}"), unmapped = format_args!("{page:#x}"), "hsa_amd_svm_attributes_set: the range is not all mapped memory");
                return Err(HsaError::INVALID_ARGUMENT);
            }
        }
        platform
            .memory
            .remove_at(start, |r| r.kind == RegionKind::Svm);
        if accessible {
            platform.memory.add(Region {
                start,
                host: start,
                len: end - start,
                kind: RegionKind::Svm,
                owner: platform.cpu_agent().handle(),
                global_flags: if range.model == MODEL_COARSE {
                    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
                } else {
                    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                },
                user_data: 0,
                mapped_len: end - start,
            });
        }
        tracing::debug!(target: "hsasim", start = format_args!("{start:#x}"), end = format_args!("{end:#x}"), accessible, "svm attributes set");
        svm.retain(|r| !(r.start == start && r.end == end));
        svm.push(range);
        Ok(())
    }

    /// Reports the attributes of the newest range covering `[start, end)` into `list`
    /// (defaults for memory never given attributes: fine-grained, CPU access in place, GPUs
    /// no access).
    pub fn get(
        &self,
        platform: &Platform<'_>,
        start: u64,
        end: u64,
        list: &mut [AttributePair],
    ) -> HsaResult {
        let range = self
            .ranges
            .lock()
            .iter()
            .rev()
            .find(|r| r.start <= start && end <= r.end)
            .cloned()
            .unwrap_or_else(|| SvmRange::new(start, end));
        for p in list.iter_mut() {
            p.value = match p.attribute {
                ATTRIB_GLOBAL_FLAG => range.model,
                ATTRIB_READ_ONLY => u64::from(range.read_only),
                ATTRIB_HIVE_LOCAL => u64::from(range.hive_local),
                ATTRIB_MIGRATION_GRANULARITY => range.granularity,
                ATTRIB_PREFERRED_LOCATION => range.preferred,
                ATTRIB_PREFETCH_LOCATION => range.prefetch,
                ATTRIB_READ_MOSTLY => u64::from(range.read_mostly),
                ATTRIB_ACCESS_QUERY => {
                    let a = platform.agent(hsa_agent_t { handle: p.value })?;
                    p.attribute = match range.access.get(&p.value) {
                        Some(how) => *how,
                        None if a.is_gpu() => ATTRIB_AGENT_NO_ACCESS,
                        None => ATTRIB_AGENT_ACCESSIBLE_IN_PLACE,
                    };
                    p.value
                }
                other => {
                    tracing::error!(target: "hsasim", attribute = other, "hsa_amd_svm_attributes_get: attribute not queryable");
                    return Err(HsaError::INVALID_ARGUMENT);
                }
            };
        }
        Ok(())
    }

    /// Records `agent` as the prefetch location of the ranges overlapping the page range of
    /// `[ptr, ptr + size)`.
    pub fn note_prefetch(&self, ptr: u64, size: u64, agent: hsa_agent_t) {
        if let Ok((start, end)) = page_range(ptr, size) {
            for r in self.ranges.lock().iter_mut() {
                if r.start < end && start < r.end {
                    r.prefetch = agent.handle;
                }
            }
        }
    }
}
