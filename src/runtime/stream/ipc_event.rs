//! The shared state of an interprocess event (`hipEventInterprocess`): one page of a memfd
//! that every process holding the event maps, with two counters, records issued and records
//! completed. As in AMD's runtime (which emulates IPC events with a shared-memory object too),
//! the HSA runtime's IPC signals are not used.
//!
//! - A record (in any of the processes) takes the next sequence number from `issued` on the
//!   host, at `hipEventRecord`, and its marker's completion stores it into `completed` (an
//!   HSA async handler on the marker's signal, `event.rs`).
//! - Waiting for the event waits, on the host, until `completed` reaches what `issued` was
//!   when the wait began: the latest record any process made before it.
//!
//! The handle holds the pid of a process that has the page open and its descriptor number
//! (the creator's memfd, or in a process that opened the event the file it opened, so such a
//! process can hand the event on); another process opens `/proc/PID/fd/FD` (same user, that
//! process alive while it opens). Opening a handle in the process that made it is
//! hipErrorInvalidContext, as in AMD's runtime. A record whose work
//! faults never completes: the creator's own waits report the fault (`event.rs`), another
//! process waits until the creator has gone, then fails.

use crate::error::{HipError, HipResult};
use crate::runtime::mem::ipc;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// "HSEV": the first word of the shared page and of every handle.
const MAGIC: u32 = 0x4853_4556;
const CHECK_SALT: u32 = 0x1bc0_ffee;
const MEMFD_NAME: &str = "hipshim-ipc-event";
const PAGE: usize = 4096;

#[repr(C)]
struct Shared {
    magic: AtomicU32,
    creator: AtomicU32,
    issued: AtomicU64,
    completed: AtomicU64,
}

/// One process's view of an interprocess event's shared page.
pub struct SharedEvent {
    page: *mut Shared,
    /// The page's file in this process (the creator's memfd, or the file another process
    /// opened), which other processes open through `/proc`.
    file: OwnedFd,
    /// The process that created the event.
    creator: u32,
}

// SAFETY: the page is only touched through atomics; the mapping lives as long as the value.
unsafe impl Send for SharedEvent {}
// SAFETY: as above.
unsafe impl Sync for SharedEvent {}

fn os_error(what: &str) -> HipError {
    tracing::warn!(err = %std::io::Error::last_os_error(), "interprocess event: {what} failed");
    HipError::OUT_OF_MEMORY
}

fn map_page(fd: i32) -> HipResult<*mut Shared> {
    // SAFETY: a fresh shared mapping of one page of `fd`; the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_error("mmap"));
    }
    Ok(p.cast())
}

fn check_word(words: &[u32; 4]) -> u32 {
    words[..3]
        .iter()
        .fold(CHECK_SALT, |acc, w| acc.rotate_left(7) ^ w)
}

impl SharedEvent {
    /// A new shared page, for an event this process creates.
    pub fn create() -> HipResult<Arc<SharedEvent>> {
        let name = CString::new(MEMFD_NAME).expect("no NUL");
        let fd = ipc::memfd(&name).map_err(|_| os_error("memfd_create"))?;
        // SAFETY: sizing our own memfd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), PAGE as libc::off_t) } != 0 {
            return Err(os_error("ftruncate"));
        }
        let page = map_page(fd.as_raw_fd())?;
        let creator = std::process::id();
        let event = SharedEvent {
            page,
            file: fd,
            creator,
        };
        event.shared().creator.store(creator, Ordering::Relaxed);
        event.shared().magic.store(MAGIC, Ordering::Release);
        Ok(Arc::new(event))
    }

    fn shared(&self) -> &Shared {
        // SAFETY: `page` is a live mapping of a zero-initialised page, only used through
        // atomics.
        unsafe { &*self.page }
    }

    /// The 64-byte `hipIpcEventHandle_t` another process opens this event with.
    pub fn handle(&self) -> [u8; 64] {
        let mut words = [MAGIC, std::process::id(), self.file.as_raw_fd() as u32, 0];
        words[3] = check_word(&words);
        let mut bytes = [0u8; 64];
        for (i, w) in words.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        bytes
    }

    /// Maps the page of another process's event.
    pub fn open(handle: &[u8; 64]) -> HipResult<Arc<SharedEvent>> {
        let call = "hipIpcOpenEventHandle";
        let mut words = [0u32; 4];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u32::from_le_bytes(handle[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        }
        if words[0] != MAGIC || words[3] != check_word(&words) {
            tracing::warn!("{call}: not a handle hipIpcGetEventHandle made");
            return Err(HipError::INVALID_VALUE);
        }
        let (holder, fd) = (words[1], words[2]);
        if holder == std::process::id() {
            tracing::warn!(
                "{call}: the handle was made by this process, which has the event already"
            );
            return Err(HipError::INVALID_CONTEXT);
        }
        let path = format!("/proc/{holder}/fd/{fd}");
        let is_event = std::fs::read_link(&path).is_ok_and(|t| {
            t.to_string_lossy()
                .starts_with(&format!("/memfd:{MEMFD_NAME}"))
        });
        if !is_event {
            tracing::warn!(
                path,
                "{call}: the creating process or its event is gone (or may not be opened)"
            );
            return Err(HipError::INVALID_VALUE);
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                tracing::warn!(path, err = %e, "{call}: cannot open the event's shared page");
                HipError::INVALID_VALUE
            })?;
        let page = map_page(file.as_raw_fd())?;
        let mut event = SharedEvent {
            page,
            file: file.into(),
            creator: 0,
        };
        let shared = event.shared();
        if shared.magic.load(Ordering::Acquire) != MAGIC {
            tracing::warn!("{call}: the shared page is not an event's");
            return Err(HipError::INVALID_VALUE);
        }
        event.creator = shared.creator.load(Ordering::Relaxed);
        if event.creator == std::process::id() {
            tracing::warn!("{call}: this process created the event");
            return Err(HipError::INVALID_CONTEXT);
        }
        Ok(Arc::new(event))
    }

    /// The sequence number of a new record (counted as issued at once).
    pub fn begin_record(&self) -> u64 {
        self.shared().issued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Record `seq` completed (so did every earlier one: a stream's markers complete in order,
    /// and a later record stands for the event's state).
    pub fn complete(&self, seq: u64) {
        self.shared().completed.fetch_max(seq, Ordering::AcqRel);
    }

    /// Whether the latest record issued so far has completed.
    pub fn is_complete(&self) -> bool {
        let issued = self.shared().issued.load(Ordering::Acquire);
        self.shared().completed.load(Ordering::Acquire) >= issued
    }

    /// Waits on the host for the latest record issued before the call. Fails if the event's
    /// creator ended while the record was still outstanding and no other process completes it
    /// within a second after.
    pub fn wait(&self) -> HipResult {
        let target = self.shared().issued.load(Ordering::Acquire);
        let started = Instant::now();
        let mut creator_gone_since: Option<Instant> = None;
        let mut pause = Duration::from_micros(5);
        let mut polls = 0u32;
        while self.shared().completed.load(Ordering::Acquire) < target {
            polls += 1;
            if polls < 200 {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
            if self.creator != std::process::id() && polls.is_multiple_of(256) {
                // SAFETY: signal 0 only asks whether the process exists.
                let alive = unsafe { libc::kill(self.creator as libc::pid_t, 0) } == 0
                    || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
                match (alive, creator_gone_since) {
                    (true, _) => creator_gone_since = None,
                    (false, None) => creator_gone_since = Some(Instant::now()),
                    (false, Some(t)) if t.elapsed() > Duration::from_secs(1) => {
                        tracing::warn!(
                            creator = self.creator,
                            waited_ms = started.elapsed().as_millis() as u64,
                            "interprocess event: its creator has ended with a record outstanding"
                        );
                        return Err(HipError::LAUNCH_FAILURE);
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

impl Drop for SharedEvent {
    fn drop(&mut self) {
        // SAFETY: the page mapped at creation or opening, unused once the value goes.
        unsafe { libc::munmap(self.page.cast(), PAGE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_complete_in_order_and_foreign_handles_are_rejected() {
        let e = SharedEvent::create().unwrap();
        assert!(e.is_complete(), "never recorded");
        let first = e.begin_record();
        let second = e.begin_record();
        assert!(!e.is_complete());
        e.complete(second);
        e.complete(first);
        assert!(e.is_complete());
        e.wait().unwrap();
        let handle = e.handle();
        assert_eq!(
            SharedEvent::open(&handle).err(),
            Some(HipError::INVALID_CONTEXT)
        );
        assert_eq!(
            SharedEvent::open(&[0; 64]).err(),
            Some(HipError::INVALID_VALUE)
        );
    }
}
