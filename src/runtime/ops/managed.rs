//! Managed memory beyond the allocation (`hipMallocManaged` itself is in `mem/memory.rs`): the
//! advice a program gives about ranges of it (`hipMemAdvise`), prefetches
//! (`hipMemPrefetchAsync`), what `hipMemRangeGetAttribute(s)` reads back, stream attachment
//! (`hipStreamAttachMemAsync`); `__managed__` variables are `mem/managed_var.rs`'s.
//!
//! Managed memory is fine-grained system memory that every device reaches coherently, so no
//! advice or prefetch changes where data lives or how it is accessed; what they change is
//! what the program reads back, which follows CUDA's documented rules (HIP's too): advice
//! holds per byte range, a query over a range answers a value only if the whole range has it,
//! and memory allocated again at a freed allocation's address starts without advice.

use crate::error::{HipError, HipResult};
use crate::runtime::devices::device::Device;
use crate::runtime::mem::memory::{self, MemKind};
use crate::runtime::mem::mempool::MemLocation;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// `hipCpuDeviceId`: the host as a location.
pub const CPU_DEVICE_ID: i32 = -1;
/// `hipInvalidDeviceId`: no single location.
pub const INVALID_DEVICE_ID: i32 = -2;

/// `hipMemoryAdvise`.
mod advice {
    pub const SET_READ_MOSTLY: u32 = 1;
    pub const UNSET_READ_MOSTLY: u32 = 2;
    pub const SET_PREFERRED_LOCATION: u32 = 3;
    pub const UNSET_PREFERRED_LOCATION: u32 = 4;
    pub const SET_ACCESSED_BY: u32 = 5;
    pub const UNSET_ACCESSED_BY: u32 = 6;
    pub const SET_COARSE_GRAIN: u32 = 100;
    pub const UNSET_COARSE_GRAIN: u32 = 101;
}

/// `hipMemRangeAttribute`.
pub mod range_attribute {
    pub const READ_MOSTLY: u32 = 1;
    pub const PREFERRED_LOCATION: u32 = 2;
    pub const ACCESSED_BY: u32 = 3;
    pub const LAST_PREFETCH_LOCATION: u32 = 4;
    pub const COHERENCY_MODE: u32 = 100;
}

/// `hipMemRangeCoherencyMode`.
mod coherency {
    pub const FINE_GRAIN: i32 = 0;
    pub const COARSE_GRAIN: i32 = 1;
    pub const INDETERMINATE: i32 = 2;
}

/// `hipMemAttach*` (hipStreamAttachMemAsync's flags).
const ATTACH_FLAGS: [u32; 3] = [1, 2, 4];

/// What one byte of managed memory has been told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Advice {
    read_mostly: bool,
    preferred: i32,
    /// A bit per device index, and bit 63 for the host.
    accessed_by: u64,
    last_prefetch: i32,
    coarse_grain: bool,
}

const NO_ADVICE: Advice = Advice {
    read_mostly: false,
    preferred: INVALID_DEVICE_ID,
    accessed_by: 0,
    last_prefetch: INVALID_DEVICE_ID,
    coarse_grain: false,
};

const HOST_BIT: u64 = 1 << 63;

/// The advice of one allocation as runs of equal advice: start offset -> (end, advice).
/// Offsets never covered have [`NO_ADVICE`].
#[derive(Default)]
struct Runs(BTreeMap<usize, (usize, Advice)>);

impl Runs {
    /// Splits runs so that `at` starts one (if a run covers it).
    fn split_at(&mut self, at: usize) {
        let Some((&start, &(end, advice))) = self.0.range(..at).next_back() else {
            return;
        };
        if end > at {
            self.0.insert(start, (at, advice));
            self.0.insert(at, (end, advice));
        }
    }

    /// Applies `change` to the advice of every byte in `[start, end)`.
    fn update(&mut self, start: usize, end: usize, change: impl Fn(&mut Advice)) {
        self.split_at(start);
        self.split_at(end);
        // Gaps inside the range get runs of their own, so every byte is covered.
        let mut at = start;
        let mut pieces = Vec::new();
        for (&s, &(e, a)) in self.0.range(start..end) {
            if s > at {
                pieces.push((at, s, NO_ADVICE));
            }
            pieces.push((s, e, a));
            at = e;
        }
        if at < end {
            pieces.push((at, end, NO_ADVICE));
        }
        for (s, e, mut a) in pieces {
            change(&mut a);
            self.0.insert(s, (e, a));
        }
        self.merge();
    }

    /// Joins neighbouring runs with equal advice and drops runs of no advice.
    fn merge(&mut self) {
        let mut merged: BTreeMap<usize, (usize, Advice)> = BTreeMap::new();
        for (&s, &(e, a)) in &self.0 {
            if a == NO_ADVICE {
                continue;
            }
            if let Some((_, last)) = merged.iter_mut().next_back() {
                if last.0 == s && last.1 == a {
                    last.0 = e;
                    continue;
                }
            }
            merged.insert(s, (e, a));
        }
        self.0 = merged;
    }

    /// The advice of every byte of `[start, end)`, folded by `fold` from the first byte's.
    fn fold<T>(
        &self,
        start: usize,
        end: usize,
        first: impl Fn(&Advice) -> T,
        fold: impl Fn(T, &Advice) -> T,
    ) -> T {
        let mut pieces = Vec::new();
        let mut at = start;
        if let Some((_, &(e, a))) = self
            .0
            .range(..=start)
            .next_back()
            .filter(|(_, (e, _))| *e > start)
        {
            pieces.push(a);
            at = e;
        }
        for (&s, &(e, a)) in self.0.range(start + 1..end) {
            if s > at {
                pieces.push(NO_ADVICE);
            }
            pieces.push(a);
            at = e;
        }
        if at < end {
            pieces.push(NO_ADVICE);
        }
        let mut iter = pieces.iter();
        let Some(head) = iter.next() else {
            return first(&NO_ADVICE);
        };
        iter.fold(first(head), fold)
    }
}

/// Advice by the start address of the managed allocation it is about, with that
/// allocation's buffer id (`memory::buffer_id`): memory allocated again at a freed
/// allocation's address has another id, so its advice starts afresh.
static ADVICE: Mutex<BTreeMap<usize, (u32, Runs)>> = Mutex::new(BTreeMap::new());

/// The advice of the managed allocation at `base` for an update: stale advice (of a freed
/// allocation) dropped, here and for every allocation freed since.
fn advice_for_update(table: &mut BTreeMap<usize, (u32, Runs)>, base: usize) -> &mut Runs {
    table.retain(|&start, (id, _)| memory::buffer_id(start) == Some(*id));
    let id = memory::buffer_id(base).unwrap_or(0);
    &mut table.entry(base).or_insert_with(|| (id, Runs::default())).1
}

/// The managed allocation holding `[ptr, ptr + count)`: as offsets into it and its start.
fn managed_range(ptr: *const c_void, count: usize, call: &str) -> HipResult<(usize, usize, usize)> {
    if ptr.is_null() || count == 0 {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            count,
            "{call}: a null pointer or an empty range"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let start = ptr as usize;
    match memory::lookup(start, count) {
        Some(a) if a.kind == MemKind::Managed => {
            Ok((a.start, start - a.start, start - a.start + count))
        }
        Some(a) => {
            tracing::warn!(ptr = format_args!("{ptr:p}"), count, kind = ?a.kind, "{call}: not managed memory");
            Err(HipError::INVALID_VALUE)
        }
        None => {
            tracing::warn!(
                ptr = format_args!("{ptr:p}"),
                count,
                "{call}: the range is not inside one managed allocation"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// `device` as a location: an index of one of `devices`, or `hipCpuDeviceId` where
/// `host_allowed`.
fn location(devices: &[Device], device: i32, host_allowed: bool, call: &str) -> HipResult<i32> {
    let count = devices.len() as i32;
    if (0..count).contains(&device) || (host_allowed && device == CPU_DEVICE_ID) {
        return Ok(device);
    }
    tracing::warn!(device, devices = count, "{call}: not a device");
    Err(HipError::INVALID_DEVICE)
}

fn location_bit(location: i32) -> u64 {
    if location == CPU_DEVICE_ID {
        HOST_BIT
    } else {
        1 << location
    }
}

/// `hipMemAdvise`.
/// `device` is an ordinal of `devices` or the CPU.
/// `hipMemLocation` as the device argument of [`advise`] and [`prefetch`] (the `_v2` calls):
/// a device by ordinal, or the host. hsasim's host is one NUMA node, so a host NUMA node
/// (`hipMemLocationTypeHostNuma`, `...HostNumaCurrent`) is the host.
pub fn device_of_location(location: MemLocation) -> HipResult<i32> {
    match location.type_ {
        LOCATION_DEVICE => Ok(location.id),
        LOCATION_HOST | LOCATION_HOST_NUMA | LOCATION_HOST_NUMA_CURRENT => Ok(CPU_DEVICE_ID),
        other => {
            tracing::error!(
                location_type = other,
                "not a hipMemLocationType for advice or prefetch (1 device, 2 host, 3 host NUMA node, 4 the calling thread's NUMA node)"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// `hipMemLocationType` values.
const LOCATION_DEVICE: u32 = 1;
const LOCATION_HOST: u32 = 2;
const LOCATION_HOST_NUMA: u32 = 3;
const LOCATION_HOST_NUMA_CURRENT: u32 = 4;

pub fn advise(
    devices: &[Device],
    ptr: *const c_void,
    count: usize,
    advice: u32,
    device: i32,
) -> HipResult {
    const CALL: &str = "hipMemAdvise";
    let (base, start, end) = managed_range(ptr, count, CALL)?;
    let change: Box<dyn Fn(&mut Advice)> = match advice {
        // The device does not matter to these, but must still name one (AMD checks it).
        advice::SET_READ_MOSTLY | advice::UNSET_READ_MOSTLY => {
            location(devices, device, true, CALL)?;
            let on = advice == advice::SET_READ_MOSTLY;
            Box::new(move |a| a.read_mostly = on)
        }
        advice::SET_PREFERRED_LOCATION => {
            let at = location(devices, device, true, CALL)?;
            Box::new(move |a| a.preferred = at)
        }
        advice::UNSET_PREFERRED_LOCATION => {
            location(devices, device, true, CALL)?;
            Box::new(|a| a.preferred = INVALID_DEVICE_ID)
        }
        advice::SET_ACCESSED_BY | advice::UNSET_ACCESSED_BY => {
            let bit = location_bit(location(devices, device, true, CALL)?);
            if advice == advice::SET_ACCESSED_BY {
                Box::new(move |a| a.accessed_by |= bit)
            } else {
                Box::new(move |a| a.accessed_by &= !bit)
            }
        }
        advice::SET_COARSE_GRAIN | advice::UNSET_COARSE_GRAIN => {
            location(devices, device, true, CALL)?;
            let on = advice == advice::SET_COARSE_GRAIN;
            Box::new(move |a| a.coarse_grain = on)
        }
        _ => {
            tracing::warn!(advice, "{CALL}: unknown advice");
            return Err(HipError::INVALID_VALUE);
        }
    };
    tracing::debug!(
        ptr = format_args!("{ptr:p}"),
        count,
        advice,
        device,
        "{CALL}"
    );
    advice_for_update(&mut ADVICE.lock(), base).update(start, end, change);
    Ok(())
}

/// `hipMemPrefetchAsync`: the memory is where every device and the host reach it already, so
/// nothing moves; the range remembers where it was sent (`LastPrefetchLocation`).
/// `device` is an ordinal of `devices` or the CPU.
pub fn prefetch(
    devices: &[Device],
    ptr: *const c_void,
    count: usize,
    device: i32,
    stream: *mut c_void,
) -> HipResult {
    const CALL: &str = "hipMemPrefetchAsync";
    let (base, start, end) = managed_range(ptr, count, CALL)?;
    let at = location(devices, device, true, CALL)?;
    crate::runtime::stream::lookup(devices, stream)?;
    crate::runtime::graph::capture::refuse_on(devices, stream, CALL)?;
    tracing::debug!(
        ptr = format_args!("{ptr:p}"),
        count,
        device,
        "{CALL}: nothing to move (coherent system memory)"
    );
    advice_for_update(&mut ADVICE.lock(), base).update(start, end, |a| a.last_prefetch = at);
    Ok(())
}

/// `hipMemPrefetchBatchAsync` (ROCm 7.2): `ranges[i]` is prefetched to the location whose
/// `first_of` entry is the last at or before `i` (so `first_of` starts at 0 and rises below the
/// number of ranges). Every range and location is checked before any is recorded; AMD's checks:
/// `flags` 0, a stream other than the null stream, at most as many locations as ranges, a
/// device location naming a device (hipErrorInvalidValue for each).
pub fn prefetch_batch(
    devices: &[Device],
    ranges: &[(*const c_void, usize)],
    locations: &[MemLocation],
    first_of: &[usize],
    flags: u64,
    stream: *mut c_void,
) -> HipResult {
    const CALL: &str = "hipMemPrefetchBatchAsync";
    let refuse = |why: &str| {
        tracing::warn!(
            flags,
            ranges = ranges.len(),
            locations = locations.len(),
            "{CALL}: {why}"
        );
        Err(HipError::INVALID_VALUE)
    };
    if locations.is_empty() || locations.len() > ranges.len() {
        return refuse("there must be 1 to count locations");
    }
    if flags != 0 {
        return refuse("flags must be 0");
    }
    if stream.is_null() {
        return refuse("the null stream is not allowed");
    }
    let rises = first_of
        .iter()
        .enumerate()
        .all(|(k, &i)| i < ranges.len() && if k == 0 { i == 0 } else { i > first_of[k - 1] });
    if !rises {
        return refuse("prefetchLocIdxs must start at 0, rise and stay below count");
    }
    let mut checked = Vec::with_capacity(ranges.len());
    for (i, &(ptr, count)) in ranges.iter().enumerate() {
        let k = first_of.partition_point(|&first| first <= i) - 1;
        let at = locations[k];
        if at.type_ == LOCATION_DEVICE && !(0..devices.len() as i32).contains(&at.id) {
            return refuse("a device location names no device");
        }
        let device = location(devices, device_of_location(at)?, true, CALL)?;
        checked.push((managed_range(ptr, count, CALL)?, device));
    }
    crate::runtime::stream::lookup(devices, stream)?;
    crate::runtime::graph::capture::refuse_on(devices, stream, CALL)?;
    // Nothing moves (coherent system memory): what changes is the last prefetch location each
    // range reports.
    let mut advice = ADVICE.lock();
    for ((base, start, end), at) in checked {
        advice_for_update(&mut advice, base).update(start, end, |a| a.last_prefetch = at);
    }
    Ok(())
}

/// `hipMemRangeGetAttribute`: writes `attribute` of `[ptr, ptr + count)` into `data`.
///
/// # Safety
/// `data` is null or points to `data_size` writable bytes.
pub unsafe fn range_attribute(
    data: *mut c_void,
    data_size: usize,
    attribute: u32,
    ptr: *const c_void,
    count: usize,
) -> HipResult {
    const CALL: &str = "hipMemRangeGetAttribute";
    if data.is_null() || data_size == 0 || !data_size.is_multiple_of(4) {
        tracing::warn!(data_size, "{CALL}: no room for the answer");
        return Err(HipError::INVALID_VALUE);
    }
    let one_int = attribute != range_attribute::ACCESSED_BY;
    if one_int && data_size != 4 {
        tracing::warn!(data_size, attribute, "{CALL}: this attribute takes 4 bytes");
        return Err(HipError::INVALID_VALUE);
    }
    if attribute == range_attribute::COHERENCY_MODE && !ptr.is_null() && count != 0 {
        if let Some(mode) = fixed_coherency(ptr as usize, count) {
            // SAFETY: checked above: `data` holds 4 bytes.
            unsafe { data.cast::<i32>().write_unaligned(mode) };
            return Ok(());
        }
    }
    let (base, start, end) = managed_range(ptr, count, CALL)?;
    let table = ADVICE.lock();
    let empty = Runs::default();
    let runs = match table.get(&base) {
        Some((id, runs)) if memory::buffer_id(base) == Some(*id) => runs,
        _ => &empty,
    };
    let same = |pick: fn(&Advice) -> i32, differ: i32| {
        runs.fold(
            start,
            end,
            |a| Some(pick(a)),
            |v, a| v.filter(|&v| v == pick(a)),
        )
        .unwrap_or(differ)
    };
    let value = match attribute {
        range_attribute::READ_MOSTLY => same(|a| i32::from(a.read_mostly), 0),
        range_attribute::PREFERRED_LOCATION => same(|a| a.preferred, INVALID_DEVICE_ID),
        range_attribute::LAST_PREFETCH_LOCATION => same(|a| a.last_prefetch, INVALID_DEVICE_ID),
        range_attribute::COHERENCY_MODE => same(
            |a| {
                if a.coarse_grain {
                    coherency::COARSE_GRAIN
                } else {
                    coherency::FINE_GRAIN
                }
            },
            coherency::INDETERMINATE,
        ),
        range_attribute::ACCESSED_BY => {
            let all = runs.fold(start, end, |a| a.accessed_by, |v, a| v & a.accessed_by);
            let slots = data_size / 4;
            let mut ids = (0..64).filter(|bit| all & (1u64 << bit) != 0).map(|bit| {
                if bit == 63 {
                    CPU_DEVICE_ID
                } else {
                    bit
                }
            });
            for slot in 0..slots {
                let id = ids.next().unwrap_or(INVALID_DEVICE_ID);
                // SAFETY: `data` holds `data_size` bytes (the caller's contract); 4-byte
                // writes, unaligned allowed.
                unsafe { data.cast::<i32>().add(slot).write_unaligned(id) };
            }
            return Ok(());
        }
        _ => {
            tracing::warn!(attribute, "{CALL}: unknown attribute");
            return Err(HipError::INVALID_VALUE);
        }
    };
    // SAFETY: checked above: `data` holds 4 bytes.
    unsafe { data.cast::<i32>().write_unaligned(value) };
    Ok(())
}

/// The coherency of memory that is not managed (no advice changes it), for a range inside one
/// known allocation: device memory is coarse-grained, host memory fine-grained unless
/// allocated `hipHostMallocNonCoherent`. AMD's runtime answers for any memory here (it asks
/// the driver's SVM attributes), and hip-tests check that hipMalloc memory is coarse-grained.
fn fixed_coherency(ptr: usize, count: usize) -> Option<i32> {
    let alloc = memory::lookup(ptr, count)?;
    Some(match alloc.kind {
        MemKind::Managed => return None,
        MemKind::PinnedHost if alloc.flags & memory::host_flags::NON_COHERENT != 0 => {
            coherency::COARSE_GRAIN
        }
        MemKind::PinnedHost | MemKind::Registered => coherency::FINE_GRAIN,
        MemKind::Device
        | MemKind::DeviceGlobal
        | MemKind::Pooled
        | MemKind::Virtual
        | MemKind::Imported => coherency::COARSE_GRAIN,
    })
}

/// `hipStreamAttachMemAsync`: every stream reaches managed memory already; checks the call.
/// `stream` is a stream of one of `devices`.
pub fn attach(
    devices: &[Device],
    stream: *mut c_void,
    ptr: *const c_void,
    length: usize,
    flags: u32,
) -> HipResult {
    const CALL: &str = "hipStreamAttachMemAsync";
    if !ATTACH_FLAGS.contains(&flags) {
        tracing::warn!(
            flags,
            "{CALL}: flags are one of hipMemAttachGlobal, Host, Single"
        );
        return Err(HipError::INVALID_VALUE);
    }
    crate::runtime::stream::lookup(devices, stream)?;
    if ptr.is_null() {
        return Err(HipError::INVALID_VALUE);
    }
    // The whole allocation, which must start at `ptr`: its length or zero. Another length
    // is for system memory on devices with pageable memory access (CUDA's rule), which
    // these devices do not report.
    let ok = memory::starting_at(ptr as usize)
        .is_some_and(|a| a.kind == MemKind::Managed && (length == 0 || length == a.size));
    if !ok {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            length,
            "{CALL}: not (the whole of) a managed allocation"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_mostly(runs: &Runs, start: usize, end: usize) -> i32 {
        runs.fold(
            start,
            end,
            |a| Some(i32::from(a.read_mostly)),
            |v, a| v.filter(|&v| v == i32::from(a.read_mostly)),
        )
        .unwrap_or(0)
    }

    #[test]
    fn advice_holds_per_byte_and_a_range_query_needs_every_byte() {
        let mut runs = Runs::default();
        runs.update(100, 200, |a| a.read_mostly = true);
        assert_eq!(read_mostly(&runs, 100, 200), 1);
        assert_eq!(read_mostly(&runs, 150, 160), 1);
        assert_eq!(
            read_mostly(&runs, 50, 150),
            0,
            "bytes 50..100 were never advised"
        );
        assert_eq!(
            read_mostly(&runs, 150, 250),
            0,
            "bytes 200..250 were never advised"
        );
        runs.update(120, 130, |a| a.read_mostly = false);
        assert_eq!(read_mostly(&runs, 100, 120), 1);
        assert_eq!(read_mostly(&runs, 100, 200), 0);
        runs.update(120, 130, |a| a.read_mostly = true);
        assert_eq!(runs.0.len(), 1, "equal neighbours merge back into one run");
        runs.update(0, 1000, |a| a.read_mostly = false);
        assert!(runs.0.is_empty(), "runs of no advice are dropped");
    }

    #[test]
    fn fields_change_independently() {
        let mut runs = Runs::default();
        runs.update(0, 64, |a| a.preferred = 1);
        runs.update(32, 96, |a| a.accessed_by |= 1);
        let preferred = |s, e| {
            runs.fold(
                s,
                e,
                |a| Some(a.preferred),
                |v, a| v.filter(|&v| v == a.preferred),
            )
        };
        assert_eq!(preferred(0, 64), Some(1));
        assert_eq!(preferred(0, 96), None);
        let accessed = runs.fold(32, 96, |a| a.accessed_by, |v, a| v & a.accessed_by);
        assert_eq!(accessed, 1);
        let accessed = runs.fold(0, 96, |a| a.accessed_by, |v, a| v & a.accessed_by);
        assert_eq!(accessed, 0);
    }
}
