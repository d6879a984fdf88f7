//! The interpreter keeps translations of guest memory (`exec::tlb`) while the memory's
//! generation counter holds its value: two loads from one buffer ask the memory once, and a
//! buffer remapped or unmapped in the middle of a dispatch (the memory moves its counter) is
//! looked up again, so the wave reads the new bytes or faults, never the old host page.

mod common;

use common::*;
use hsasim_isa::{run_dispatch, DispatchError, ExecConfig, GuestMemory, Span};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Guest address of the window the test moves (not host memory: only `translate` makes
/// it reachable).
const WINDOW: u64 = 0x5000_0000_0000;
const WINDOW_LEN: u64 = 4096;

/// What the memory does when the wave raises its interrupt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnInterrupt {
    Nothing,
    /// The window now reaches this host buffer.
    MoveTo(u64),
    Unmap,
}

struct Moving {
    /// Identity-mapped ranges (the kernel, its output).
    ranges: Ranges,
    /// The host address the window reaches, or none.
    window: Mutex<Option<u64>>,
    on_interrupt: OnInterrupt,
    generation: AtomicU64,
    /// Lookups of window addresses (translate or translate_span).
    window_lookups: AtomicU64,
}

impl Moving {
    fn new(host: u64, on_interrupt: OnInterrupt) -> Moving {
        Moving {
            ranges: Ranges::default(),
            window: Mutex::new(Some(host)),
            on_interrupt,
            generation: AtomicU64::new(0),
            window_lookups: AtomicU64::new(0),
        }
    }
}

impl GuestMemory for Moving {
    fn translate(&self, address: u64, len: u64) -> Option<u64> {
        let span = self.translate_span(address, len)?;
        Some(address.wrapping_add(span.offset))
    }

    fn generation(&self) -> Option<&AtomicU64> {
        Some(&self.generation)
    }

    fn translate_span(&self, address: u64, len: u64) -> Option<Span> {
        let end = address.checked_add(len)?;
        if (WINDOW..WINDOW + WINDOW_LEN).contains(&address) {
            self.window_lookups.fetch_add(1, Ordering::Relaxed);
            let host = (*self.window.lock().unwrap())?;
            return (end <= WINDOW + WINDOW_LEN).then_some(Span {
                start: WINDOW,
                end: WINDOW + WINDOW_LEN,
                offset: host.wrapping_sub(WINDOW),
            });
        }
        let host = self.ranges.translate(address, len)?;
        Some(Span {
            start: address,
            end,
            offset: host.wrapping_sub(address),
        })
    }

    fn interrupt(&self, _data: u32) {
        let mut window = self.window.lock().unwrap();
        match self.on_interrupt {
            OnInterrupt::Nothing => return,
            OnInterrupt::MoveTo(host) => *window = Some(host),
            OnInterrupt::Unmap => *window = None,
        }
        // After the change, as hsasim's registry does.
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// Loads window[0], raises the interrupt, loads window[1]; stores both to `out`.
fn kernel(out: u64) -> Vec<u32> {
    let lo = |a: u64| a as u32;
    let hi = |a: u64| (a >> 32) as u32;
    vec![
        0xbe80_00ff, // s_mov_b32 s0, WINDOW lo
        lo(WINDOW),
        0xbe81_00ff, // s_mov_b32 s1, WINDOW hi
        hi(WINDOW),
        0xbe82_00ff, // s_mov_b32 s2, out lo
        lo(out),
        0xbe83_00ff, // s_mov_b32 s3, out hi
        hi(out),
        0x7e00_0280, // v_mov_b32 v0, 0
        0xdc50_8000, // global_load_dword v1, v0, s[0:1]
        0x0100_0000,
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0xbf90_0001, // s_sendmsg sendmsg(MSG_INTERRUPT)
        0xdc50_8004, // global_load_dword v2, v0, s[0:1] offset:4
        0x0200_0000,
        0xbf8c_0f70, // s_waitcnt vmcnt(0)
        0xdc70_8000, // global_store_dword v0, v1, s[2:3]
        0x0002_0100,
        0xdc70_8004, // global_store_dword v0, v2, s[2:3] offset:4
        0x0002_0200,
        0xbf81_0000, // s_endpgm
    ]
}

/// Runs the kernel once per model against a window first at `a`; the output words or the
/// error, and the window lookups of each run.
fn run(
    a: &[u32],
    on_interrupt: impl Fn() -> OnInterrupt,
) -> Vec<(Result<[u32; 2], DispatchError>, u64)> {
    MODELS
        .iter()
        .map(|&model| {
            let mem = Moving::new(a.as_ptr() as u64, on_interrupt());
            let out = [0u32; 2];
            mem.ranges.add_slice(&out);
            let (mut buf, kd) = handmade_kernel();
            let code = kernel(out.as_ptr() as u64);
            code_words(&mut buf, &code);
            mem.ranges.add(kd, 256 + 4 * code.len() as u64);
            let (d, _p) = packet(model, kd, 0, [64, 1, 1], [64, 1, 1], 0, &mem.ranges);
            let result = run_dispatch(&d, &mem, &ExecConfig::BASE);
            // SAFETY: the dispatch has finished; `out` was written through its address.
            let words = unsafe { std::ptr::read_volatile(&out) };
            (
                result.map(|()| words),
                mem.window_lookups.load(Ordering::Relaxed),
            )
        })
        .collect()
}

#[test]
fn loads_from_one_buffer_ask_the_memory_once() {
    let a = [11u32, 12];
    for (result, lookups) in run(&a, || OnInterrupt::Nothing) {
        assert_eq!(result.unwrap(), [11, 12]);
        assert_eq!(lookups, 1, "the second load reuses the first one's span");
    }
}

#[test]
fn a_buffer_moved_mid_dispatch_is_read_at_its_new_place() {
    let a = [11u32, 12];
    let b = [21u32, 22];
    let results = run(&a, || OnInterrupt::MoveTo(b.as_ptr() as u64));
    for (result, lookups) in results {
        assert_eq!(
            result.unwrap(),
            [11, 22],
            "the second load reads the new bytes"
        );
        assert_eq!(lookups, 2);
    }
}

#[test]
fn a_buffer_unmapped_mid_dispatch_faults() {
    let a = [11u32, 12];
    for (result, _) in run(&a, || OnInterrupt::Unmap) {
        match result {
            Err(DispatchError::MemoryFault {
                address,
                write: false,
                ..
            }) => assert_eq!(address, WINDOW + 4),
            other => panic!("want a read fault at the window, got {other:?}"),
        }
    }
}
