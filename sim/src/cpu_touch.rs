//! Reporting a CPU touch of device memory the CPU cannot reach.
//!
//! Without `HSASIM_LARGE_BAR`, a GPU's coarse-grained allocations are handed to the program
//! at addresses with nothing behind them, as on a host whose PCIe BAR does not span the
//! device's memory: on such hardware the touch is a segmentation fault with no hint of why.
//! hsasim's SIGSEGV handler recognises the address as device memory and says so (rule
//! `cpu-touch-device-memory`, the allocation's base and size) before the process dies as it
//! would on hardware. Every other fault goes to the handler that was there before.

use std::fmt::Write as _;
use std::sync::{Once, OnceLock};

/// The rule name printed with the report.
pub const RULE: &str = "cpu-touch-device-memory";

static INSTALL: Once = Once::new();
/// The SIGSEGV disposition before ours, restored and run for faults that are not ours.
static mut PREVIOUS: Option<libc::sigaction> = None;

/// Finds the device allocation the CPU may not touch that holds an address, as (start,
/// length). Called inside the SIGSEGV handler: it must neither block nor allocate.
pub type AllocationLookup = fn(u64) -> Option<(u64, u64)>;

/// Where the handler looks a faulting address up: installed by the runtime
/// ([`install_lookup`]), which owns the memory registry; this module sits below it.
static LOOKUP: OnceLock<AllocationLookup> = OnceLock::new();

/// Tells the handler how to recognise device memory (the first call wins: the runtime
/// installs the same function at every `hsa_init`).
pub fn install_lookup(lookup: AllocationLookup) {
    let _ = LOOKUP.set(lookup);
}

/// Installs the handler (once per process): called when the first device allocation the CPU
/// may not touch is made, so programs that never make one keep their signal state untouched.
pub fn watch() {
    INSTALL.call_once(|| {
        // SAFETY: `action` is fully initialised before use; `sigaction` writes the old
        // disposition into `previous`, which is stored before any fault can reach the handler
        // that reads it (a fault before the store finds `PREVIOUS` empty and falls back to the
        // default action, which is what it would have had).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_segv as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGSEGV, &action, &mut previous) == 0 {
                PREVIOUS = Some(previous);
            } else {
                tracing::warn!(target: "hsasim", "cannot install the SIGSEGV handler: CPU touches of device memory will not be named");
            }
        }
    });
}

/// A message built without allocating (a signal handler may not).
struct StackText {
    bytes: [u8; 512],
    len: usize,
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.bytes.len() - self.len;
        let n = s.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

extern "C" fn on_segv(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let address = unsafe { (*info).si_addr() } as u64;
    // An atomic load and a call: nothing here takes a lock or allocates.
    let allocation = LOOKUP.get().and_then(|lookup| lookup(address));
    if let Some((start, len)) = allocation {
        let mut text = StackText {
            bytes: [0; 512],
            len: 0,
        };
        let _ = writeln!(
            text,
            "hsasim: strict rule `{RULE}`: the CPU touched {address:#x}, inside device memory \
             {start:#x} (+{len} bytes) from a GPU's coarse-grained pool; this GPU reports no \
             large-BAR access (HSASIM_LARGE_BAR=0), so the CPU cannot reach its memory: copy it \
             with hipMemcpy/hsa_amd_memory_async_copy instead"
        );
        // SAFETY: writing a stack buffer to stderr is async-signal-safe.
        unsafe { libc::write(2, text.bytes.as_ptr().cast(), text.len) };
    }
    // SAFETY: `PREVIOUS` is written once, before the handler is installed, and only read
    // afterwards; restoring it and returning makes the faulting access repeat under the old
    // disposition (the default action ends the process with SIGSEGV, as hardware would).
    unsafe {
        let previous = (*std::ptr::addr_of!(PREVIOUS)).unwrap_or_else(|| {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            default
        });
        let handler = previous.sa_sigaction;
        if allocation.is_none()
            && previous.sa_flags & libc::SA_SIGINFO != 0
            && handler != libc::SIG_DFL
            && handler != libc::SIG_IGN
        {
            // Someone else's fault (a Rust stack-overflow guard page, a program's own
            // handler): theirs to handle, and ours stays installed.
            let chained: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            chained(signal, info, context);
            return;
        }
        libc::sigaction(libc::SIGSEGV, &previous, std::ptr::null_mut());
    }
}
