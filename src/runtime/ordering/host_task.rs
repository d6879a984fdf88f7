//! Host tasks (callbacks, host functions, fills): run on hipshim's callback thread, in
//! stream order.

use super::engine::{DeviceStreams, OutOfQueue, OwedReports, Stream, StreamKind};
use crate::error::{HipError, HipResult};
use crate::hsa::signal::PooledSignal;
use hsa_abi::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::LazyLock;

/// What ends a host task: opening the gate the stream's later work waits for.
trait Opens: Send + 'static {
    fn open(&self);
}

impl Opens for PooledSignal {
    fn open(&self) {
        self.signal().subtract_release(1);
    }
}

/// The code of a host task; an error it returns is reported by its stream like a fault (a
/// stream fill that failed, say).
pub type HostWork = Box<dyn FnOnce() -> HipResult + Send>;

/// Host work ordered in a stream: it runs on hipshim's callback thread once the stream's
/// earlier work is complete, and the stream's later work waits for it (its gate).
///
/// Dropping the task opens the gate, exactly once, whatever happened: it ran, its code
/// panicked, or it was dropped without running (a panic on its way to the callback thread).
/// In the last two cases the stream owes `hipErrorUnknown`, so the failure is reported
/// rather than lost, and nothing waits forever.
struct HostTask<G: Opens = PooledSignal> {
    run: Option<HostWork>,
    done: G,
    owed: Arc<OwedReports>,
    /// The marker the task waited for, kept until the task has run.
    _after: Option<PooledSignal>,
    /// Whose task it is, for the waits it may not make while it runs.
    origin: TaskOrigin,
}

/// The stream a host task belongs to, as the waits refused inside it need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskOrigin {
    /// The stream's address (an identity only, never dereferenced).
    stream: usize,
    /// Its device's ordinal.
    device: usize,
    /// Whether it is the null stream or a blocking stream: what null-stream synchronisation
    /// and synchronous copies wait for.
    legacy: bool,
}

impl TaskOrigin {
    fn of(device: &DeviceStreams, stream: &Stream) -> TaskOrigin {
        TaskOrigin {
            stream: stream_identity(stream),
            device: stream.device_index(device),
            legacy: stream.kind == StreamKind::Null || stream.is_blocking(),
        }
    }
}

/// A stream's identity while it lives: its address (a created stream is an `Arc`, the null
/// stream lives in its device).
pub fn stream_identity(stream: &Stream) -> usize {
    std::ptr::from_ref(stream) as usize
}

thread_local! {
    /// The host task this thread is running (only ever set on the callback thread).
    static RUNNING: Cell<Option<TaskOrigin>> = const { Cell::new(None) };
}

/// What a blocking call is about to wait for.
#[derive(Clone, Copy, Debug)]
pub enum Wait {
    /// One stream's work (`hipStreamSynchronize`): the stream's identity, whether it is a
    /// null stream, and its device.
    Stream {
        stream: usize,
        null: bool,
        device: usize,
    },
    /// The null stream and the blocking streams of a device (synchronous copies and fills).
    Legacy { device: usize },
    /// Every stream of a device (`hipDeviceSynchronize`).
    Device { device: usize },
    /// A record on a stream not complete yet (`hipEventSynchronize`): the stream's identity.
    Record { stream: usize },
}

impl Wait {
    /// Whether the wait includes the work behind `task`'s gate: it could only end after the
    /// task, which is waiting for it.
    fn waits_behind(self, task: TaskOrigin) -> bool {
        match self {
            Wait::Stream {
                stream,
                null,
                device,
            } => stream == task.stream || (null && device == task.device && task.legacy),
            Wait::Legacy { device } => device == task.device && task.legacy,
            Wait::Device { device } => device == task.device,
            Wait::Record { stream } => stream == task.stream,
        }
    }
}

/// Refuses a wait made inside a host task (a stream callback or host function) that would
/// wait for that task itself, with `hipErrorNotPermitted` and a log line: the task's stream
/// cannot go on until the task returns, so such a wait would never end. CUDA forbids API
/// calls in callbacks altogether; hipshim refuses only the waits that cannot end, and lets a
/// callback make calls that do not block (recording events, queueing async work, queries).
#[inline]
pub fn refuse_wait_in_host_task(api: &str, wait: Wait) -> HipResult {
    match RUNNING.with(Cell::get) {
        Some(task) if wait.waits_behind(task) => {
            tracing::error!(
                ?wait,
                "{api} inside a stream callback or host function would wait for that callback \
                 itself (a deadlock): refused with hipErrorNotPermitted; CUDA allows no API \
                 call that waits for work inside a callback"
            );
            Err(HipError::NOT_PERMITTED)
        }
        _ => Ok(()),
    }
}

impl<G: Opens> HostTask<G> {
    /// Runs the task's code; its error, or a panic in it (stopped here, `hipErrorUnknown`),
    /// is owed by the stream.
    fn execute(mut self) {
        if let Some(run) = self.run.take() {
            let outer = RUNNING.with(|running| running.replace(Some(self.origin)));
            let outcome =
                crate::hsa::callback::guarded("a stream host task", Err(HipError::UNKNOWN), run);
            RUNNING.with(|running| running.set(outer));
            if let Err(error) = outcome {
                self.owed.owe(error);
            }
        }
    }
}

impl<G: Opens> Drop for HostTask<G> {
    fn drop(&mut self) {
        if self.run.take().is_some() {
            tracing::error!("internal error: a stream host task was dropped without running; its stream reports hipErrorUnknown");
            self.owed.owe(HipError::UNKNOWN);
        }
        // Opens the gate: the stream's next packet (a barrier on it) may now run.
        self.done.open();
    }
}

/// One thread runs every stream's host tasks in the order they become ready. Host tasks must
/// not wait for other stream work (CUDA's rule for callbacks), or they would wait for it here.
static CALLBACK_THREAD: LazyLock<Result<std::sync::mpsc::Sender<HostTask>, String>> =
    LazyLock::new(|| {
        let (send, receive) = std::sync::mpsc::channel::<HostTask>();
        std::thread::Builder::new()
            .name("hipshim-callbacks".into())
            .spawn(move || {
                for task in receive {
                    task.execute();
                }
            })
            .map(|_| send)
            .map_err(|e| e.to_string())
    });

fn send_host_task(task: HostTask) {
    match &*CALLBACK_THREAD {
        // The thread is gone (process exit): run it here rather than never.
        Ok(sender) => {
            if let Err(failed) = sender.send(task) {
                failed.0.execute();
            }
        }
        Err(_) => task.execute(),
    }
}

/// Called by the HSA runtime's async-handler thread when the marker a host task waits for
/// completes; hands the task to the callback thread (user code never runs on the HSA thread).
/// Guarded: a panic here drops the task, which still opens its gate (see [`HostTask`]).
unsafe extern "C" fn on_marker_done(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
    crate::hsa::callback::guarded("the host-task signal handler", false, || {
        // SAFETY: `arg` is the `Box<HostTask>` leaked when the handler was registered; the
        // HSA runtime calls a handler that returns false exactly once.
        let task = unsafe { Box::from_raw(arg as *mut HostTask) };
        send_host_task(*task);
        false
    })
}

/// Enqueues `run` as host work in `stream` (see [`HostTask`]); it waits for the stream's
/// earlier work off the engines, in an HSA signal handler.
pub fn enqueue_host_task(device: &DeviceStreams, stream: &Stream, run: HostWork) -> HipResult {
    let mut run = Some(run);
    stream.enqueue_out_of_queue(device, 1, |after, done| {
        let task = HostTask {
            run: run.take(),
            done: done.clone(),
            owed: stream.owed.clone(),
            _after: after.cloned(),
            origin: TaskOrigin::of(device, stream),
        };
        (OutOfQueue::OffEngine, start_after(device, task, after))
    })
}

/// Hands `task` to the callback thread now, or once `after` completes.
fn start_after(device: &DeviceStreams, task: HostTask, after: Option<&PooledSignal>) -> HipResult {
    let Some(after) = after else {
        send_host_task(task);
        return Ok(());
    };
    let arg = Box::into_raw(Box::new(task));
    // SAFETY: the marker signal is live (held by the task and the stream); the handler takes
    // ownership of `arg` when it runs.
    let status = unsafe {
        (device.api.hsa_amd_signal_async_handler)(
            after.handle(),
            HSA_SIGNAL_CONDITION_EQ,
            0,
            Some(on_marker_done),
            arg as *mut c_void,
        )
    };
    if let Err(e) = crate::hsa::check("hsa_amd_signal_async_handler", status) {
        // SAFETY: the handler was not registered, so `arg` is still ours.
        let mut task = unsafe { Box::from_raw(arg) };
        // It never runs: this call fails instead (dropping it opens the gate).
        task.run = None;
        return Err(e.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const ORIGIN: TaskOrigin = TaskOrigin {
        stream: 0x1000,
        device: 0,
        legacy: true,
    };

    /// A gate that counts how often it was opened.
    struct CountingGate(Arc<AtomicUsize>);

    impl Opens for CountingGate {
        fn open(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn task(run: Option<HostWork>) -> (HostTask<CountingGate>, Arc<AtomicUsize>, Arc<OwedReports>) {
        let opened = Arc::new(AtomicUsize::new(0));
        let owed = Arc::new(OwedReports::default());
        let task = HostTask {
            run,
            done: CountingGate(opened.clone()),
            owed: owed.clone(),
            _after: None,
            origin: ORIGIN,
        };
        (task, opened, owed)
    }

    #[test]
    fn a_host_task_that_runs_opens_its_gate_once_and_owes_nothing() {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        let (task, opened, owed) = task(Some(Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })));
        task.execute();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        let owed = owed.take_all();
        assert!(owed.stream.is_none() && owed.device.is_none());
    }

    #[test]
    fn a_host_task_that_panics_still_opens_its_gate_and_its_stream_reports_it() {
        let (task, opened, owed) = task(Some(Box::new(|| panic!("a panic in a host task"))));
        task.execute();
        assert_eq!(
            opened.load(Ordering::SeqCst),
            1,
            "the stream is not left waiting"
        );
        let owed = owed.take_all();
        assert_eq!(owed.stream, Some(HipError::UNKNOWN));
        assert_eq!(owed.device, Some(HipError::UNKNOWN));
    }

    #[test]
    fn a_host_task_that_fails_opens_its_gate_and_its_stream_reports_its_error() {
        let (task, opened, owed) = task(Some(Box::new(|| Err(HipError::INVALID_VALUE))));
        task.execute();
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        let owed = owed.take_all();
        assert_eq!(owed.stream, Some(HipError::INVALID_VALUE));
        assert_eq!(owed.device, Some(HipError::INVALID_VALUE));
    }

    #[test]
    fn a_host_task_dropped_without_running_opens_its_gate_and_its_stream_reports_it() {
        let (task, opened, owed) = task(Some(Box::new(|| Ok(()))));
        // What a panic between the signal handler and the callback thread does to it.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _task = task;
            panic!("a panic on the way to the callback thread");
        }));
        assert!(result.is_err());
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        assert_eq!(owed.take_stream(), Some(HipError::UNKNOWN));
    }

    #[test]
    fn a_host_task_that_is_refused_opens_its_gate_and_owes_nothing() {
        let (mut task, opened, owed) = task(Some(Box::new(|| Ok(()))));
        task.run = None;
        drop(task);
        assert_eq!(opened.load(Ordering::SeqCst), 1);
        assert!(owed.take_stream().is_none());
    }

    #[test]
    fn inside_a_host_task_only_the_waits_that_include_it_are_refused() {
        let nonblocking = TaskOrigin {
            legacy: false,
            ..ORIGIN
        };
        let cases = [
            // (the task, the wait, refused)
            (
                ORIGIN,
                Wait::Stream {
                    stream: 0x1000,
                    null: false,
                    device: 0,
                },
                true,
            ),
            (
                ORIGIN,
                Wait::Stream {
                    stream: 0x2000,
                    null: false,
                    device: 0,
                },
                false,
            ),
            (
                ORIGIN,
                Wait::Stream {
                    stream: 0x2000,
                    null: true,
                    device: 0,
                },
                true,
            ),
            (
                ORIGIN,
                Wait::Stream {
                    stream: 0x2000,
                    null: true,
                    device: 1,
                },
                false,
            ),
            (
                nonblocking,
                Wait::Stream {
                    stream: 0x2000,
                    null: true,
                    device: 0,
                },
                false,
            ),
            (ORIGIN, Wait::Legacy { device: 0 }, true),
            (nonblocking, Wait::Legacy { device: 0 }, false),
            (ORIGIN, Wait::Legacy { device: 1 }, false),
            (nonblocking, Wait::Device { device: 0 }, true),
            (ORIGIN, Wait::Device { device: 1 }, false),
            (ORIGIN, Wait::Record { stream: 0x1000 }, true),
            (ORIGIN, Wait::Record { stream: 0x2000 }, false),
        ];
        for (task, wait, refused) in cases {
            assert_eq!(wait.waits_behind(task), refused, "{task:?} {wait:?}");
        }
        // Outside a host task nothing is refused.
        assert!(refuse_wait_in_host_task("test", Wait::Device { device: 0 }).is_ok());
    }

    #[test]
    fn a_running_host_task_is_known_to_its_thread_until_it_returns() {
        let seen = Arc::new(std::sync::Mutex::new(None));
        let inside = seen.clone();
        let (task, _, owed) = task(Some(Box::new(move || {
            *inside.lock().unwrap() = Some(refuse_wait_in_host_task(
                "test",
                Wait::Record { stream: 0x1000 },
            ));
            Ok(())
        })));
        task.execute();
        assert_eq!(*seen.lock().unwrap(), Some(Err(HipError::NOT_PERMITTED)));
        assert!(owed.take_stream().is_none());
        assert!(refuse_wait_in_host_task("test", Wait::Record { stream: 0x1000 }).is_ok());
    }
}
