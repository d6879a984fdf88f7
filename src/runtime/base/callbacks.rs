//! AMD's callback interface for tracing tools (roctracer and the tools built on it): the HIP
//! calls reported as they enter and leave, and the device work they start (kernel dispatches,
//! copies) reported once it completed, with the device's begin and end times. Fed from
//! hipshim's own trace points: the API shells (`api::shell`), the launch path's kernel note,
//! the packets the HSA layer publishes (as the probe's second sink, `probe::start_activity`)
//! and the copy hooks (`runtime::copy`).
//!
//! Two protocols, as the program's ROCm ABI has them (`compat`):
//!
//! - **ROCm 5.0 to 5.2** (the `Rocm5` profile; Debian's libamdhip64 5.2): a table by callback
//!   id. `hipRegisterActivityCallback(id, act, arg)` turns the id on: at the call's entry
//!   `act(id, NULL, NULL, NULL)` returns the tool's `hip_api_data_t` record; the API callback
//!   of `hipRegisterApiCallback(id, fun, arg)` then gets `fun(ACTIVITY_DOMAIN_HIP_API, id,
//!   record, arg)` at the entry and again at the exit (`phase` 0, then 1), and `act(id, NULL,
//!   NULL, arg)` ends the call. An API callback alone (no activity callback for its id) is
//!   never called, as in AMD's runtime. Device work: `hipInitActivityCallback(id_cb, op_cb,
//!   arg)` and `hipEnableActivityCallback(op, on)` (op 0 dispatch, 1 copy): each dispatch or
//!   copy of an enabled op gets a record id from one process-wide counter (from 0), handed to
//!   `id_cb(id)` on the calling thread while the call runs; when the work completed
//!   `op_cb(op, &record, arg)` gets the `activity_record_t` under that id.
//! - **ROCm 5.3 on, 6 and 7**: `hipRegisterTracerCallback(report)`. For each call,
//!   `report(ACTIVITY_DOMAIN_HIP_API, id, &trace_data)` returns 0 if the tool traces it, having
//!   set the correlation id and its `phase_enter` / `phase_exit` functions in `trace_data`
//!   (`hip_api_trace_data_t`: the `hip_api_data_t`, then the enter timestamp, the tool's word,
//!   and the two functions); they are called with `(id, &trace_data)`. The call's correlation
//!   id tags the device work it starts: for each dispatch or copy whose op the tool enables
//!   (`report(ACTIVITY_DOMAIN_HIP_OPS, op, NULL) == 0`) the completed work is reported as
//!   `report(ACTIVITY_DOMAIN_HIP_OPS, op, &record)`, a dispatch's record with its kernel name.
//!   AMD's runtime from 5.3 on exports none of the 5.2 calls: under the ROCm 6 and 7 profiles
//!   they answer `hipErrorNotSupported` (`false`, nothing, for the two that return no status).
//!
//! What the records hold: the callback id, the phase, the correlation id; the args union of
//! `hip_api_data_t` is left as the tool had it (zero in `trace_data`): hipshim's shells do not
//! copy their arguments out. Activity records: domain, command kind (AMD's `cl_command_type`
//! values, `hipGetCmdName`), op, correlation id, begin and end in ns of the HSA system clock
//! (the device's own timestamps; hsasim's virtual clock when it keeps one), device, queue,
//! bytes for a copy, kernel name for a dispatch (ROCm 5.3 on; 5.2's record has only bytes).
//!
//! The size of `hip_api_data_t` (and so where the tool's functions sit in `trace_data`) is
//! that of the program's headers: its args union is as large as its largest member, the
//! `hipChooseDevice` arguments with a `hipDeviceProp_t` copy (792 bytes up to ROCm 5, 1472 from
//! ROCm 6 on), so 832 and 1512 bytes.
//!
//! Cost while nothing is registered: none on the launch path beyond the loads that were there
//! (the shells' `observed` word, the probe's packet-timing word); everything here runs on the
//! observed (cold) paths.

use super::compat::{self, Abi};
use crate::error::{HipError, HipResult};
use crate::hsa::signal::PooledSignal;
use crate::hsa::HsaApi;
use hsa_abi::*;
use parking_lot::{Mutex, RwLock};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

/// `activity_domain_t`: device work.
pub const DOMAIN_HIP_OPS: u32 = 2;
/// `activity_domain_t`: the HIP calls.
pub const DOMAIN_HIP_API: u32 = 3;
/// `activity_api_phase_t`.
pub const PHASE_ENTER: u32 = 0;
pub const PHASE_EXIT: u32 = 1;
/// The ops (`HipVdiOpId`): a kernel dispatch, a copy.
pub const OP_DISPATCH: u32 = 0;
pub const OP_COPY: u32 = 1;
const OP_COUNT: u32 = 3;

/// Command kinds (`cl_command_type`, `HipVdiCommandKind`) of the records.
pub const KIND_KERNEL: u32 = 0x11F0;
pub const KIND_DEVICE_TO_HOST: u32 = 0x11F3;
pub const KIND_HOST_TO_DEVICE: u32 = 0x11F4;
pub const KIND_DEVICE_TO_DEVICE: u32 = 0x11F5;

/// `sizeof(hip_api_data_t)` in the program's headers (see the module's text).
pub fn api_data_size(abi: Abi) -> usize {
    match abi {
        Abi::Rocm5 => 832,
        Abi::Rocm6 | Abi::Rocm7 => 1512,
    }
}

/// `activity_record_t` (the same 64 bytes in ROCm 5 and 6; the last word is the copy's bytes
/// or, from 5.3 on, a dispatch's kernel name).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActivityRecord {
    pub domain: u32,
    pub kind: u32,
    pub op: u32,
    pub correlation_id: u64,
    pub begin_ns: u64,
    pub end_ns: u64,
    pub device_id: i32,
    pub queue_id: u64,
    /// `bytes`, or `kernel_name` (a `const char*`).
    pub bytes_or_name: u64,
}

const _: () = assert!(std::mem::size_of::<ActivityRecord>() == 64);

/// The head of `hip_api_data_t`; the args union follows at 16.
#[repr(C)]
struct ApiDataHead {
    correlation_id: u64,
    phase: u32,
}

type ApiCallback = unsafe extern "C" fn(u32, u32, *const c_void, *mut c_void);
type LegacyActivity =
    unsafe extern "C" fn(u32, *mut ActivityRecord, *const c_void, *mut c_void) -> *mut c_void;
type IdCallback = unsafe extern "C" fn(u64);
type OpCallback = unsafe extern "C" fn(u32, *mut ActivityRecord, *mut c_void);
type Tracer = unsafe extern "C" fn(u32, u32, *mut c_void) -> i32;
type Phase = unsafe extern "C" fn(u32, *mut c_void);

// ---- registration ----

/// One id's entry of the ROCm 5.2 table (function pointers and arguments as addresses).
#[derive(Clone, Copy, Default)]
struct Entry {
    fun: usize,
    arg: usize,
    act: usize,
    act_arg: usize,
}

/// The callback ids of AMD's calls by name (`abi/hip_api_ids.txt`).
static API_IDS: LazyLock<HashMap<&'static str, u32>> = LazyLock::new(|| {
    include_str!("../../../abi/hip_api_ids.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let id = words.next()?.parse().ok()?;
            Some((words.next()?, id))
        })
        .collect()
});

fn last_id() -> u32 {
    API_IDS.values().copied().max().unwrap_or(0)
}

/// The callback id of the HIP call named `name` (0: none).
pub fn api_id(name: &str) -> u32 {
    API_IDS.get(name).copied().unwrap_or(0)
}

static TABLE: LazyLock<RwLock<Vec<Entry>>> =
    LazyLock::new(|| RwLock::new(vec![Entry::default(); last_id() as usize + 1]));
/// Ids with an activity callback in the 5.2 table: the calls are reported while any has.
static LEGACY_IDS_ON: AtomicUsize = AtomicUsize::new(0);

/// 5.2's device-work callbacks.
struct LegacyOps {
    id_callback: usize,
    op_callback: usize,
    arg: usize,
}
static LEGACY_OPS: RwLock<LegacyOps> = RwLock::new(LegacyOps {
    id_callback: 0,
    op_callback: 0,
    arg: 0,
});
static LEGACY_OPS_ON: [AtomicBool; OP_COUNT as usize] =
    [const { AtomicBool::new(false) }; OP_COUNT as usize];
static NEXT_RECORD: AtomicU64 = AtomicU64::new(0);

/// The 5.3-on report function.
static TRACER: AtomicUsize = AtomicUsize::new(0);

/// Whether any callback is registered: the shells then report their calls here.
static ANY: AtomicBool = AtomicBool::new(false);

fn legacy_profile() -> HipResult {
    if compat::abi() == Abi::Rocm5 {
        Ok(())
    } else {
        Err(HipError::NOT_SUPPORTED)
    }
}

/// `hipRegisterApiCallback` / `hipRemoveApiCallback` (null `fun`): ids outside AMD's range
/// are hipErrorInvalidValue.
pub fn set_api_callback(id: u32, fun: *mut c_void, arg: *mut c_void) -> HipResult {
    update_entry(id, |entry| {
        entry.fun = fun as usize;
        entry.arg = if fun.is_null() { 0 } else { arg as usize };
    })
}

/// `hipRegisterActivityCallback` / `hipRemoveActivityCallback` (null `act`).
pub fn set_activity_callback(id: u32, act: *mut c_void, arg: *mut c_void) -> HipResult {
    update_entry(id, |entry| {
        entry.act = act as usize;
        entry.act_arg = if act.is_null() { 0 } else { arg as usize };
    })
}

/// Changes the 5.2 table's entry for `id` (ROCm 5 profile; AMD's range of ids), keeping the
/// count of ids with an activity callback.
fn update_entry(id: u32, change: impl FnOnce(&mut Entry)) -> HipResult {
    legacy_profile()?;
    let mut table = TABLE.write();
    let entry = table
        .get_mut(id as usize)
        .filter(|_| id >= 1)
        .ok_or(HipError::INVALID_VALUE)?;
    let was_on = entry.act != 0;
    change(entry);
    match (was_on, entry.act != 0) {
        (false, true) => LEGACY_IDS_ON.fetch_add(1, Ordering::Relaxed),
        (true, false) => LEGACY_IDS_ON.fetch_sub(1, Ordering::Relaxed),
        _ => 0,
    };
    drop(table);
    update_watch();
    Ok(())
}

/// `hipInitActivityCallback`: ignored outside the ROCm 5 profile (AMD's later runtimes lack it).
pub fn init_activity(id_callback: *mut c_void, op_callback: *mut c_void, arg: *mut c_void) {
    if legacy_profile().is_err() {
        return;
    }
    *LEGACY_OPS.write() = LegacyOps {
        id_callback: id_callback as usize,
        op_callback: op_callback as usize,
        arg: arg as usize,
    };
}

/// `hipEnableActivityCallback`: false for an op AMD does not have (and outside ROCm 5).
pub fn enable_activity(op: u32, enable: bool) -> bool {
    if legacy_profile().is_err() || op >= OP_COUNT {
        return false;
    }
    LEGACY_OPS_ON[op as usize].store(enable, Ordering::Release);
    update_watch();
    true
}

/// `hipRegisterTracerCallback` (null: stop).
pub fn set_tracer(report: *mut c_void) {
    TRACER.store(report as usize, Ordering::Release);
    update_watch();
}

fn tracer() -> Option<Tracer> {
    match TRACER.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: a function of the tool's, of this type (hipRegisterTracerCallback's contract).
        f => Some(unsafe { std::mem::transmute::<usize, Tracer>(f) }),
    }
}

fn legacy_ops_on() -> bool {
    LEGACY_OPS_ON.iter().any(|on| on.load(Ordering::Acquire))
}

/// Turns the shells' reports and the packet timing on or off after a registration.
fn update_watch() {
    let calls = LEGACY_IDS_ON.load(Ordering::Relaxed) > 0 || tracer().is_some();
    let work = legacy_ops_on() || tracer().is_some();
    ANY.store(calls || work, Ordering::Release);
    crate::observed::set(crate::observed::Watcher::Callbacks, calls || work);
    if work {
        crate::probe::start_activity(&ActivitySink);
        enable_copy_times();
    } else {
        crate::probe::stop_activity();
    }
}

// ---- the calls ----

thread_local! {
    /// The correlation id of the innermost traced call on this thread (0: none).
    static CORRELATION: Cell<u64> = const { Cell::new(0) };
    /// The kernel the launch path is about to publish a dispatch of.
    static KERNEL: Cell<Option<&'static CStr>> = const { Cell::new(None) };
}

/// A call being reported: what its exit needs.
pub struct ApiScope {
    id: u32,
    legacy: Option<(*mut c_void, Entry)>,
    traced: Option<(Tracer, Box<[u64]>, usize)>,
    outer_correlation: u64,
}

/// A HIP call named `name` starts: reports its entry to whoever registered for it.
#[cold]
pub fn api_enter(name: &str) -> Option<ApiScope> {
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    let id = api_id(name);
    if id == 0 {
        return None;
    }
    let mut scope = ApiScope {
        id,
        legacy: None,
        traced: None,
        outer_correlation: CORRELATION.try_with(Cell::get).unwrap_or(0),
    };
    let entry = TABLE.read().get(id as usize).copied().unwrap_or_default();
    if entry.act != 0 {
        // SAFETY: the tool's activity callback, of the type 5.2 gives it.
        let act = unsafe { std::mem::transmute::<usize, LegacyActivity>(entry.act) };
        // SAFETY: called as AMD's runtime calls it at a call's entry.
        let data = unsafe {
            act(
                id,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        if !data.is_null() {
            if entry.fun != 0 {
                // SAFETY: the tool's record, at least a `hip_api_data_t`; its API callback.
                unsafe {
                    (*(data as *mut ApiDataHead)).phase = PHASE_ENTER;
                    let fun = std::mem::transmute::<usize, ApiCallback>(entry.fun);
                    fun(DOMAIN_HIP_API, id, data, entry.arg as *mut c_void);
                    (*(data as *mut ApiDataHead)).phase = PHASE_EXIT;
                }
            }
            scope.legacy = Some((data, entry));
        }
    }
    if let Some(report) = tracer() {
        let size = api_data_size(compat::abi());
        let mut data = vec![0u64; (size + 32) / 8].into_boxed_slice();
        let ptr = data.as_mut_ptr() as *mut c_void;
        // SAFETY: the tool's report function, with a zeroed `hip_api_trace_data_t`.
        if unsafe { report(DOMAIN_HIP_API, id, ptr) } == 0 {
            let correlation = data[0];
            let _ = CORRELATION.try_with(|c| c.set(correlation));
            if let Some(enter) = phase_fn(&data, size, 16) {
                data[1] = PHASE_ENTER as u64;
                // SAFETY: the tool's enter function and its own record.
                unsafe { enter(id, ptr) };
            }
            scope.traced = Some((report, data, size));
        }
    }
    Some(scope)
}

/// The tool's function at `offset` past the `hip_api_data_t` of `data` (null: none).
fn phase_fn(data: &[u64], size: usize, offset: usize) -> Option<Phase> {
    match data.get((size + offset) / 8).copied().unwrap_or(0) {
        0 => None,
        // SAFETY: the tool set it to a function of this type (the protocol).
        f => Some(unsafe { std::mem::transmute::<usize, Phase>(f as usize) }),
    }
}

/// The call of `scope` returned: reports its exit, then the device work completed so far.
#[cold]
pub fn api_exit(scope: Option<ApiScope>) {
    if let Some(mut scope) = scope {
        if let Some((mut data, size)) = scope.traced.take().map(|(_, d, s)| (d, s)) {
            if let Some(exit) = phase_fn(&data, size, 24) {
                data[1] = (data[1] & !0xffff_ffff) | PHASE_EXIT as u64;
                // SAFETY: as at the entry.
                unsafe { exit(scope.id, data.as_mut_ptr() as *mut c_void) };
            }
        }
        if let Some((data, entry)) = scope.legacy {
            // SAFETY: as at the entry; AMD passes the activity argument at the exit only.
            unsafe {
                if entry.fun != 0 {
                    let fun = std::mem::transmute::<usize, ApiCallback>(entry.fun);
                    fun(DOMAIN_HIP_API, scope.id, data, entry.arg as *mut c_void);
                }
                let act = std::mem::transmute::<usize, LegacyActivity>(entry.act);
                act(
                    scope.id,
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    entry.act_arg as *mut c_void,
                );
            }
        }
        let _ = CORRELATION.try_with(|c| c.set(scope.outer_correlation));
    }
    if ANY.load(Ordering::Relaxed) {
        harvest();
    }
}

// ---- device work ----

/// The HSA runtime, for the device's timestamps.
struct Attached {
    api: &'static HsaApi,
    hz: u64,
}
static ATTACHED: OnceLock<Attached> = OnceLock::new();

/// The runtime is up (called once by `runtime::init`).
pub fn attach(api: &'static HsaApi, hz: u64) {
    let _ = ATTACHED.set(Attached { api, hz: hz.max(1) });
    if ANY.load(Ordering::Acquire) {
        enable_copy_times();
    }
}

fn enable_copy_times() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if let Some(a) = ATTACHED.get() {
        if !DONE.swap(true, Ordering::AcqRel) {
            // SAFETY: a plain flag for the runtime's copy engines.
            unsafe { (a.api.hsa_amd_profiling_async_copy_enable)(true) };
        }
    }
}

/// Names the kernel whose dispatch the launch path publishes next (while packets are timed).
#[cold]
pub fn note_kernel(name: &str) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    static NAMES: LazyLock<Mutex<HashMap<String, &'static CStr>>> = LazyLock::new(Default::default);
    let mut names = NAMES.lock();
    let interned = match names.get(name) {
        Some(n) => *n,
        None => {
            let c: &'static CStr = Box::leak(
                CString::new(name.replace('\0', ""))
                    .unwrap_or_default()
                    .into_boxed_c_str(),
            );
            names.insert(name.to_owned(), c);
            c
        }
    };
    let _ = KERNEL.try_with(|k| k.set(Some(interned)));
}

/// Who wants a record of work of `op`: the 5.2 record id (already handed to the tool's id
/// callback) and whether the 5.3-on tracer takes it.
#[derive(Clone, Copy)]
struct Wanted {
    legacy: Option<u64>,
    tracer: Option<(Tracer, u64)>,
}

fn wanted(op: u32) -> Option<Wanted> {
    let legacy = LEGACY_OPS_ON
        .get(op as usize)
        .is_some_and(|on| on.load(Ordering::Acquire))
        .then(|| {
            let record = NEXT_RECORD.fetch_add(1, Ordering::Relaxed);
            let id_callback = LEGACY_OPS.read().id_callback;
            if id_callback != 0 {
                // SAFETY: the tool's id callback (hipInitActivityCallback's contract).
                unsafe { std::mem::transmute::<usize, IdCallback>(id_callback)(record) };
            }
            record
        });
    let tracer = tracer()
        // SAFETY: the tool's report function; a null record asks whether `op` is traced.
        .filter(|report| unsafe { report(DOMAIN_HIP_OPS, op, std::ptr::null_mut()) } == 0)
        .map(|report| (report, CORRELATION.try_with(Cell::get).unwrap_or(0)));
    (legacy.is_some() || tracer.is_some()).then_some(Wanted { legacy, tracer })
}

enum Timed {
    Packet {
        signal: hsa_signal_t,
        agent: hsa_agent_t,
    },
    Copy(PooledSignal),
}

struct Pending {
    timed: Timed,
    /// None: a packet nobody wants a record of (its signal only goes back).
    wanted: Option<Wanted>,
    record: ActivityRecord,
    kernel: Option<&'static CStr>,
}

static PENDING: Mutex<VecDeque<Pending>> = Mutex::new(VecDeque::new());
static FREE_SIGNALS: Mutex<Vec<hsa_signal_t>> = Mutex::new(Vec::new());

fn ticks_to_ns(ticks: u64, hz: u64) -> u64 {
    (ticks as u128 * 1_000_000_000 / hz as u128) as u64
}

/// The probe's second sink: times the packets the HSA layer publishes while a tool may want
/// records of device work.
struct ActivitySink;

impl crate::probe::Sink for ActivitySink {
    fn packet_signal(&self) -> Option<hsa_signal_t> {
        let a = ATTACHED.get()?;
        if let Some(s) = FREE_SIGNALS.lock().pop() {
            // SAFETY: a signal of ours no packet names any more.
            unsafe { (a.api.hsa_signal_store_relaxed)(s, 1) };
            return Some(s);
        }
        let mut s = hsa_signal_t::default();
        // SAFETY: valid out-pointer; no consumer list.
        let status = unsafe { (a.api.hsa_signal_create)(1, 0, std::ptr::null(), &mut s) };
        (status == status::SUCCESS).then_some(s)
    }

    fn packet_published(&self, p: crate::probe::Published<'_>) {
        let dispatch = (p.packet.bytes[0] as u32) == HSA_PACKET_TYPE_KERNEL_DISPATCH as u32;
        let kernel = KERNEL.try_with(Cell::take).ok().flatten();
        let wanted = if dispatch { wanted(OP_DISPATCH) } else { None };
        PENDING.lock().push_back(Pending {
            timed: Timed::Packet {
                signal: p.signal,
                agent: p.agent,
            },
            wanted,
            record: ActivityRecord {
                domain: DOMAIN_HIP_OPS,
                kind: KIND_KERNEL,
                op: OP_DISPATCH,
                device_id: p.device as i32,
                queue_id: p.queue,
                ..Default::default()
            },
            kernel,
        });
    }

    fn wait_done(&self, _: u64, _: u64, _: u64, _: u64, _: bool) {}
}

/// The record kind of a copy in `direction`.
pub fn copy_kind(direction: crate::trace::Direction) -> u32 {
    use crate::trace::Direction::*;
    match direction {
        HostToDevice => KIND_HOST_TO_DEVICE,
        DeviceToHost => KIND_DEVICE_TO_HOST,
        DeviceToDevice | HostToHost => KIND_DEVICE_TO_DEVICE,
    }
}

/// Whether copies are to be reported (one load while nothing is registered).
#[inline]
pub fn watching() -> bool {
    ANY.load(Ordering::Relaxed)
}

/// A stream-ordered copy of `bytes` was started; `signal` reads 0 when it is done.
#[cold]
pub fn copy_submitted(device: u32, kind: u32, bytes: u64, signal: &PooledSignal) {
    let Some(wanted) = wanted(OP_COPY) else {
        return;
    };
    PENDING.lock().push_back(Pending {
        timed: Timed::Copy(signal.clone()),
        wanted: Some(wanted),
        record: copy_record(device, kind, bytes),
        kernel: None,
    });
}

/// A copy completed on `signal`, which is about to be reused: reported now.
#[cold]
pub fn copy_completed(device: u32, kind: u32, bytes: u64, signal: hsa_signal_t) {
    let Some(wanted) = wanted(OP_COPY) else {
        return;
    };
    let mut record = copy_record(device, kind, bytes);
    if let Some((b, e)) = copy_times(signal) {
        (record.begin_ns, record.end_ns) = (b, e);
    }
    report(wanted, record, None);
}

fn copy_record(device: u32, kind: u32, bytes: u64) -> ActivityRecord {
    ActivityRecord {
        domain: DOMAIN_HIP_OPS,
        kind,
        op: OP_COPY,
        device_id: device as i32,
        bytes_or_name: bytes,
        ..Default::default()
    }
}

fn copy_times(signal: hsa_signal_t) -> Option<(u64, u64)> {
    let a = ATTACHED.get()?;
    let mut t = hsa_amd_profiling_time_t::default();
    // SAFETY: a live signal and a valid out-pointer.
    let status = unsafe { (a.api.hsa_amd_profiling_get_async_copy_time)(signal, &mut t) };
    (status == status::SUCCESS).then(|| (ticks_to_ns(t.start, a.hz), ticks_to_ns(t.end, a.hz)))
}

/// Hands one completed piece of work to the tools that want it.
fn report(wanted: Wanted, mut record: ActivityRecord, kernel: Option<&'static CStr>) {
    if let Some(id) = wanted.legacy {
        let ops = LEGACY_OPS.read();
        let (op_callback, arg) = (ops.op_callback, ops.arg);
        drop(ops);
        if op_callback != 0 {
            let mut r = record;
            r.correlation_id = id;
            if r.op == OP_DISPATCH {
                r.bytes_or_name = 0;
            }
            // SAFETY: the tool's op callback (hipInitActivityCallback's contract).
            unsafe {
                std::mem::transmute::<usize, OpCallback>(op_callback)(
                    r.op,
                    &mut r,
                    arg as *mut c_void,
                )
            };
        }
    }
    if let Some((report, correlation)) = wanted.tracer {
        record.correlation_id = correlation;
        if record.op == OP_DISPATCH {
            record.bytes_or_name = kernel.map_or(0, |k| k.as_ptr() as u64);
        }
        // SAFETY: the tool's report function with a record of the protocol's layout.
        unsafe {
            report(
                DOMAIN_HIP_OPS,
                record.op,
                &mut record as *mut _ as *mut c_void,
            )
        };
    }
}

/// Reports the work that completed since the last look (in the order it was started), and
/// gives the packet signals back.
pub fn harvest() {
    let Some(a) = ATTACHED.get() else { return };
    let mut done = Vec::new();
    {
        let mut pending = PENDING.lock();
        while let Some(front) = pending.front() {
            let signal = match &front.timed {
                Timed::Packet { signal, .. } => *signal,
                Timed::Copy(s) => s.handle(),
            };
            // SAFETY: a live signal (ours, or a pooled one this entry holds).
            if unsafe { (a.api.hsa_signal_load_scacquire)(signal) } != 0 {
                break;
            }
            done.push(pending.pop_front().expect("checked"));
        }
    }
    for mut p in done {
        let times = match &p.timed {
            Timed::Packet { signal, agent } => {
                let mut t = hsa_amd_profiling_time_t::default();
                // SAFETY: a live signal, the queue's agent and a valid out-pointer.
                let status =
                    unsafe { (a.api.hsa_amd_profiling_get_dispatch_time)(*agent, *signal, &mut t) };
                FREE_SIGNALS.lock().push(*signal);
                (status == status::SUCCESS)
                    .then(|| (ticks_to_ns(t.start, a.hz), ticks_to_ns(t.end, a.hz)))
            }
            Timed::Copy(s) => copy_times(s.handle()),
        };
        if let Some((b, e)) = times {
            (p.record.begin_ns, p.record.end_ns) = (b, e);
        }
        if let Some(wanted) = p.wanted {
            report(wanted, p.record, p.kernel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_ids_are_amds() {
        assert_eq!(api_id("hipLaunchKernel"), 107);
        assert_eq!(api_id("hipMemcpy"), 125);
        assert_eq!(api_id("hipMalloc"), 108);
        assert_eq!(api_id("no such call"), 0);
    }

    #[test]
    fn api_data_is_as_large_as_the_headers_make_it() {
        // Debian's ROCm 5.2 headers: sizeof(hip_api_data_t) == 832; ROCm 6 and 7: 16 bytes of
        // head, then hipChooseDeviceR0600's arguments (24 + sizeof(hipDeviceProp_tR0600)).
        assert_eq!(api_data_size(Abi::Rocm5), 832);
        assert_eq!(api_data_size(Abi::Rocm6), 16 + 24 + 1472);
        assert_eq!(api_data_size(Abi::Rocm7), api_data_size(Abi::Rocm6));
    }

    #[test]
    fn an_activity_record_has_amds_layout() {
        assert_eq!(std::mem::offset_of!(ActivityRecord, correlation_id), 16);
        assert_eq!(std::mem::offset_of!(ActivityRecord, begin_ns), 24);
        assert_eq!(std::mem::offset_of!(ActivityRecord, device_id), 40);
        assert_eq!(std::mem::offset_of!(ActivityRecord, queue_id), 48);
        assert_eq!(std::mem::offset_of!(ActivityRecord, bytes_or_name), 56);
    }
}
