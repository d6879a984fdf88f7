//! Host threads kept across dispatches. Spawning a thread per worker per dispatch costs
//! tens of microseconds each, serially on the dispatching thread: at 16 workers that is a
//! noticeable share of a short dispatch, and a HIP program launches many short ones.
//! [`run_shared`] runs a closure on the calling thread and on parked pool threads at once,
//! and returns when every copy has finished (so the closure may borrow the caller's stack,
//! as with `std::thread::scope`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};

/// A share of work for a pool thread, with the count it decrements when done.
struct Job {
    work: Box<dyn FnOnce() + Send + 'static>,
    latch: Arc<Latch>,
}

/// Pool threads waiting for work, each by the sending end of its queue.
static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());
/// Idle threads kept; a thread finding the list full ends.
const MAX_IDLE: usize = 256;
/// The process the pool's threads belong to. A child made by `fork` has none of them (only
/// the forking thread survives), though it inherits the idle list: it starts afresh.
static POOL_PID: AtomicU32 = AtomicU32::new(0);

/// Counts down the shares still running.
struct Latch {
    left: Mutex<usize>,
    zero: Condvar,
}

impl Latch {
    fn done(&self) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        *left -= 1;
        if *left == 0 {
            self.zero.notify_all();
        }
    }

    fn wait(&self) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        while *left > 0 {
            left = self.zero.wait(left).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Waits for the pool's shares when dropped: also when the caller's own share unwinds, so
/// no pool thread can outlive what the closure borrows.
struct WaitOnDrop(Arc<Latch>);

impl Drop for WaitOnDrop {
    fn drop(&mut self) {
        self.0.wait();
    }
}

/// Runs `f` on `threads` threads at once (the caller and `threads - 1` pool threads) and
/// returns when all have returned. A panic in a pool thread's copy is caught there (callers
/// catch their own; see `dispatch::run`); the caller's copy unwinds normally, after the
/// others finish.
pub(crate) fn run_shared(threads: usize, f: &(dyn Fn() + Sync)) {
    let helpers = threads.saturating_sub(1);
    let pid = std::process::id();
    if helpers > 0 && POOL_PID.swap(pid, Ordering::Relaxed) != pid {
        // Senders to threads of another process (or none yet): forget them.
        IDLE.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
    let latch = Arc::new(Latch {
        left: Mutex::new(helpers),
        zero: Condvar::new(),
    });
    let _wait = WaitOnDrop(latch.clone());
    for _ in 0..helpers {
        let work: Box<dyn FnOnce() + Send + '_> = Box::new(f);
        // SAFETY: only the lifetime is changed. The job borrows `f` (and what it borrows),
        // which outlive this call; `_wait` blocks this call's return (or unwinding) until
        // every job has run and been dropped (`Latch::done` comes after both), so the
        // borrow never dangles.
        let work: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(work) };
        submit(Job {
            work,
            latch: latch.clone(),
        });
    }
    f();
}

/// Hands `job` to an idle pool thread, or to a new one.
fn submit(mut job: Job) {
    loop {
        let idle = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                // That thread has gone: take the job back and try another.
                Err(e) => job = e.0,
            },
            None => break,
        }
    }
    let (tx, rx) = channel::<Job>();
    let me = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("hsasim-worker".into())
        .spawn(move || {
            while let Ok(Job { work, latch }) = rx.recv() {
                // The closure (dispatch::run's worker) catches its own panics; this keeps
                // the thread and the count right if one ever escapes.
                let _ = catch_unwind(AssertUnwindSafe(work));
                let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
                let keep = idle.len() < MAX_IDLE;
                if keep {
                    idle.push(me.clone());
                }
                drop(idle);
                // After the job is dropped and this thread is back on the idle list, so
                // the next dispatch finds it.
                latch.done();
                if !keep {
                    return;
                }
            }
        });
    match spawned {
        Ok(_) => {
            if let Err(e) = tx.send(job) {
                // The thread ended before its first job (it cannot, short of a panic in
                // the runtime): run the share here.
                run_here(e.0);
            }
        }
        // No thread to be had: run the share on the caller, one after the other; the
        // dispatch finishes with less parallelism.
        Err(_) => run_here(job),
    }
}

fn run_here(job: Job) {
    let _ = catch_unwind(AssertUnwindSafe(job.work));
    job.latch.done();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_share_runs_before_run_shared_returns() {
        let runs = AtomicUsize::new(0);
        let threads = std::collections::HashSet::new();
        let threads = Mutex::new(threads);
        for _ in 0..20 {
            run_shared(4, &|| {
                runs.fetch_add(1, Ordering::Relaxed);
                threads.lock().unwrap().insert(std::thread::current().id());
            });
        }
        assert_eq!(runs.load(Ordering::Relaxed), 80);
        // The caller takes a share, and the helpers come back: far fewer threads than
        // shares (other tests may borrow pool threads at the same time, hence the slack).
        assert!(threads.lock().unwrap().len() < 40);
    }

    #[test]
    fn panicking_shares_neither_hang_nor_lose_the_others() {
        let runs = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run_shared(3, &|| {
                runs.fetch_add(1, Ordering::Relaxed);
                panic!("a share fails");
            })
        }));
        assert!(
            caught.is_err(),
            "the caller's own share unwinds to the caller"
        );
        assert_eq!(runs.load(Ordering::Relaxed), 3);
        // The pool still works afterwards.
        run_shared(3, &|| {
            runs.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(runs.load(Ordering::Relaxed), 6);
    }
}
