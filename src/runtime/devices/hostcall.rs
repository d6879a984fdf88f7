//! Device-to-host calls: the hostcall protocol of the ROCm device library (ockl), which device
//! `printf`, `fprintf(stderr, ...)` and `assert` use.
//!
//! A kernel that may call the host lists `hidden_hostcall_buffer` among its hidden arguments
//! (code object v4 and v5 alike; `__ockl_hostcall_preview` reads it from the implicit
//! arguments). The first such kernel loaded on a device creates that device's
//! [`HostcallService`]: a buffer in fine-grained system memory the device reaches, a doorbell
//! signal, and an asynchronous handler on the doorbell that serves the packets. Kernels
//! without the argument cost nothing: the buffer's address is a per-kernel constant of the
//! kernarg layout, resolved when the kernel is loaded.
//!
//! The buffer, as `__ockl_hostcall_internal` and its helpers in ockl.bc read and write it
//! (all fields little-endian, pointers are device addresses):
//!
//! | offset | field          | meaning                                                      |
//! |--------|----------------|--------------------------------------------------------------|
//! | 0      | `headers`      | address of `N` packet headers of 24 bytes                    |
//! | 8      | `payloads`     | address of `N` payloads: 64 lanes x 8 u64                    |
//! | 16     | `doorbell`     | `hsa_signal_t` the device adds 1 to (`__ockl_hsa_signal_add`) |
//! | 24     | `free_stack`   | tagged pointer to the first free packet (0: none)           |
//! | 32     | `ready_stack`  | tagged pointer to the last submitted packet (0: none)       |
//! | 40     | `index_mask`   | `N - 1` (`N` a power of two)                                 |
//!
//! A packet header is `{u64 next, u64 activemask, u32 service, u32 control}`. A tagged pointer
//! is `tag * N + index`, the tag going up by one each time the device returns a packet to the
//! free stack (so a compare-and-swap never mistakes a reused packet for the one it read); the
//! value 0 is the empty stack, which is why the initial tag is 1. A wave pops a free packet,
//! writes the service id, its exec mask and `control = 1` (bit 0: "ready for the host"), fills
//! its active lanes' payload slots, pushes the packet on the ready stack and rings the doorbell.
//! The host takes the whole ready stack, serves each packet lane by lane (the answer goes in
//! the first two words of the lane's slot) and clears bit 0 of `control`; the wave, spinning on
//! that bit, reads its answers and pushes the packet back on the free stack itself.
//!
//! `N` is one packet per wave the device can hold (compute units x waves per compute unit):
//! a wave owns a packet from its call until the answer, and the device library never waits
//! for a free one (an empty free stack would hand out packet 0 twice).
//!
//! Serving happens in an HSA asynchronous signal handler (`hsa_amd_signal_async_handler` on
//! the doorbell), not in a thread of the shim's own that waits on the doorbell. The two are
//! the same on a GPU; on hsasim's deterministic mode (`HSASIM_THREADS=0`) a thread that waits
//! in HSA runs pending kernels itself, so a service thread could end up running the kernel
//! that waits for it, while handlers run wherever the device progresses (hsasim runs them when
//! the wave raises its interrupt). The device library raises it (`s_sendmsg
//! sendmsg(MSG_INTERRUPT)`) after ringing, as the doorbell has an interrupt event.
//!
//! Order of output: a wave waits for the host to serve each of its packets, so a kernel's
//! device output has been written before the kernel completes, and so before any call that
//! waits for the kernel returns. It is written with the C library's `fwrite` on its `stdout` or
//! `stderr`, the same `FILE` the program's own `printf` uses, so the two interleave in program
//! order however stdout is buffered.
//!
//! Device `assert`: the header's `__assert_fail` (ours, or AMD's) prints its message to stderr
//! through this service, then traps; a message to stderr containing "Device-side assertion" is
//! noted so that the trap is reported as `hipErrorAssert` (see `base/device_assert.rs`). The
//! process goes on (as with ROCm 7); the stream that failed gets a new queue for its next
//! work, as after any fault.

use crate::error::{HipError, HipResult};
use crate::hsa::signal::Signal;
use crate::runtime::base::device_assert::note_assertion;
use crate::runtime::devices::device::Device;
use hsa_abi::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The device library's service ids (`__ockl_hostcall_preview`'s first argument).
mod service {
    /// printf and fprintf: `__ockl_printf_*`, `__ockl_fprintf_*`.
    pub const PRINTF: u32 = 2;
}

/// Bytes of one packet header: `{u64 next, u64 activemask, u32 service, u32 control}`.
const HEADER_BYTES: usize = 24;
/// Bytes of one payload: 64 lanes x 8 u64.
const PAYLOAD_BYTES: usize = 64 * 8 * 8;
/// Where the packet headers start (after the 48-byte buffer header, cache-line aligned).
const HEADERS_AT: usize = 64;
/// Payloads start on a page.
const PAYLOAD_ALIGN: usize = 4096;
/// Bit 0 of a packet's `control`: set by the device when it submits, cleared by the host
/// when the answers are in.
const CONTROL_READY: u32 = 1;

/// The printf service's message descriptor (the first word of each lane's slot): bit 0 starts
/// a message, bit 1 ends it, bits 5..8 count the argument words that follow in the slot, and
/// bits 8.. are the message id the host handed out for the start.
mod descriptor {
    pub const BEGIN: u64 = 1;
    pub const END: u64 = 2;
    pub fn words(descriptor: u64) -> usize {
        ((descriptor >> 5) & 7) as usize
    }
    pub const ID_SHIFT: u32 = 8;
}

/// The hostcall service of one device.
pub struct HostcallService {
    device: usize,
    /// The buffer's memory, kept for the life of the process (queued kernels hold its address).
    memory: crate::hsa::memory::PoolBuffer,
    doorbell: Signal,
    packets: usize,
    payloads_at: usize,
    printf: Mutex<Messages>,
}

/// printf messages being assembled, by id.
#[derive(Default)]
struct Messages {
    next_id: u64,
    open: HashMap<u64, Vec<u64>>,
}

/// Each device's service (or why it could not start), by device index. Locked only when a
/// kernel that takes the buffer is loaded, never on the launch path.
static SERVICES: Mutex<Vec<Option<Result<&'static HostcallService, HipError>>>> =
    Mutex::new(Vec::new());

/// The device address of `device`'s hostcall buffer, creating the service on first use (when
/// the first kernel that takes the buffer is loaded there).
pub fn buffer_for(device: &Device) -> HipResult<u64> {
    let mut services = SERVICES.lock();
    if services.len() <= device.index {
        services.resize(device.index + 1, None);
    }
    let service = services[device.index].get_or_insert_with(|| HostcallService::start(device));
    Ok((*service)?.memory.as_ptr() as u64)
}

impl HostcallService {
    fn start(device: &Device) -> Result<&'static HostcallService, HipError> {
        let waves = (device.info.compute_units.max(1) as usize)
            * (device.info.max_waves_per_cu.max(1) as usize);
        let packets = waves.next_power_of_two().max(64);
        let headers_end = HEADERS_AT + packets * HEADER_BYTES;
        let payloads_at = headers_end.div_ceil(PAYLOAD_ALIGN) * PAYLOAD_ALIGN;
        let bytes = payloads_at + packets * PAYLOAD_BYTES;
        let failed = |e: crate::hsa::HsaError| {
            tracing::error!(device = device.index, error = %e, "cannot set up the hostcall service (device printf and assert)");
            HipError::from(e)
        };
        let memory = device
            .host_pool
            .allocate(bytes, &[device.agent])
            .map_err(failed)?;
        let doorbell = Signal::new(device.api, 0).map_err(failed)?;
        let service: &'static HostcallService = Box::leak(Box::new(HostcallService {
            device: device.index,
            memory,
            doorbell,
            packets,
            payloads_at,
            printf: Mutex::new(Messages::default()),
        }));
        service.initialise();
        // SAFETY: the doorbell is live for the life of the process (the service is leaked),
        // and so is `arg`, the service itself.
        let status = unsafe {
            (device.api.hsa_amd_signal_async_handler)(
                service.doorbell.handle,
                HSA_SIGNAL_CONDITION_NE,
                0,
                Some(on_doorbell),
                service as *const HostcallService as *mut c_void,
            )
        };
        crate::hsa::check("hsa_amd_signal_async_handler", status).map_err(failed)?;
        tracing::info!(
            device = device.index,
            packets,
            buffer = format_args!("{:#x}", service.memory.as_ptr() as usize),
            "hostcall service started (device printf and assert)"
        );
        Ok(service)
    }

    fn base(&self) -> *mut u8 {
        self.memory.as_ptr()
    }

    /// The buffer header field at byte `offset`.
    fn field(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: the first 48 bytes of the buffer are the header, 8-aligned (the allocation
        // is page-aligned), and live as long as `self`; all access to them is atomic.
        unsafe { AtomicU64::from_ptr(self.base().add(offset).cast()) }
    }

    fn next_of(&self, index: usize) -> &AtomicU64 {
        // SAFETY: `index < packets` (masked by the caller); headers are 8-aligned, in the buffer.
        unsafe { AtomicU64::from_ptr(self.base().add(HEADERS_AT + index * HEADER_BYTES).cast()) }
    }

    fn activemask_of(&self, index: usize) -> &AtomicU64 {
        // SAFETY: as in `next_of`.
        unsafe {
            AtomicU64::from_ptr(
                self.base()
                    .add(HEADERS_AT + index * HEADER_BYTES + 8)
                    .cast(),
            )
        }
    }

    fn word_of(&self, index: usize, at: usize) -> &AtomicU32 {
        // SAFETY: as in `next_of`; the two u32 fields are at 16 and 20, 4-aligned.
        unsafe {
            AtomicU32::from_ptr(
                self.base()
                    .add(HEADERS_AT + index * HEADER_BYTES + at)
                    .cast(),
            )
        }
    }

    /// Lane `lane`'s 8 payload words of packet `index`.
    fn slot(&self, index: usize, lane: usize) -> *mut u64 {
        // SAFETY: `index < packets`, `lane < 64`: inside the payload array.
        unsafe {
            self.base()
                .add(self.payloads_at + index * PAYLOAD_BYTES + lane * 64)
                .cast()
        }
    }

    /// Writes the buffer header and links every packet into the free stack (tag 1).
    fn initialise(&self) {
        let n = self.packets as u64;
        let base = self.base() as u64;
        self.field(0)
            .store(base + HEADERS_AT as u64, Ordering::Relaxed);
        self.field(8)
            .store(base + self.payloads_at as u64, Ordering::Relaxed);
        self.field(16)
            .store(self.doorbell.handle.handle, Ordering::Relaxed);
        self.field(32).store(0, Ordering::Relaxed);
        self.field(40).store(n - 1, Ordering::Relaxed);
        for index in 0..self.packets {
            let below = if index == 0 { 0 } else { n + index as u64 - 1 };
            self.next_of(index).store(below, Ordering::Relaxed);
            self.activemask_of(index).store(0, Ordering::Relaxed);
            self.word_of(index, 16).store(0, Ordering::Relaxed);
            self.word_of(index, 20).store(0, Ordering::Relaxed);
        }
        // Last, with release: a kernel that reads the free stack sees the packets linked.
        self.field(24).store(n + n - 1, Ordering::Release);
    }

    /// Serves every packet submitted so far, in submission order.
    fn serve(&self) {
        // Reset the doorbell before taking the stack: a packet pushed after the take rings it
        // again (the device pushes, then rings), so this handler runs again for it.
        let rung = self.doorbell.load_acquire();
        if rung != 0 {
            self.doorbell.subtract_release(rung);
        }
        let mask = self.packets as u64 - 1;
        let mut top = self.field(32).swap(0, Ordering::AcqRel);
        let mut submitted = Vec::new();
        while top != 0 && submitted.len() < self.packets {
            let index = (top & mask) as usize;
            submitted.push(index);
            top = self.next_of(index).load(Ordering::Acquire);
        }
        for index in submitted.into_iter().rev() {
            self.serve_packet(index);
        }
    }

    fn serve_packet(&self, index: usize) {
        let service = self.word_of(index, 16).load(Ordering::Acquire);
        let lanes = self.activemask_of(index).load(Ordering::Acquire);
        for lane in (0..64).filter(|lane| lanes & (1u64 << lane) != 0) {
            let slot = self.slot(index, lane);
            // SAFETY: the lane's 8 words, which the device filled before submitting and does
            // not touch until `control` is cleared below.
            let words: [u64; 8] = unsafe { std::ptr::read_volatile(slot.cast()) };
            let answer = match service {
                service::PRINTF => self.printf(&words),
                other => {
                    tracing::error!(
                        device = self.device,
                        service = other,
                        packet = index,
                        "hostcall: a kernel asked for an unknown service; answered with 0"
                    );
                    0
                }
            };
            // SAFETY: as above.
            unsafe {
                std::ptr::write_volatile(slot, answer);
                std::ptr::write_volatile(slot.add(1), 0);
            }
        }
        self.word_of(index, 20)
            .fetch_and(!CONTROL_READY, Ordering::Release);
    }

    /// One lane's printf packet: adds its words to the lane's message; the last one prints
    /// it. Answers the message's descriptor, or for the last packet the bytes printed.
    fn printf(&self, words: &[u64; 8]) -> u64 {
        let descriptor = words[0];
        let data = &words[1..1 + descriptor::words(descriptor).min(7)];
        let mut messages = self.printf.lock();
        let id = if descriptor & descriptor::BEGIN != 0 {
            let id = messages.next_id;
            messages.next_id = (id + 1) & (u64::MAX >> descriptor::ID_SHIFT);
            messages.open.insert(id, Vec::new());
            id
        } else {
            descriptor >> descriptor::ID_SHIFT
        };
        let Some(message) = messages.open.get_mut(&id) else {
            tracing::error!(
                device = self.device,
                id,
                "hostcall printf: a packet for a message that was never begun; dropped"
            );
            return 0;
        };
        message.extend_from_slice(data);
        if descriptor & descriptor::END == 0 {
            return id << descriptor::ID_SHIFT;
        }
        let message = messages.open.remove(&id).unwrap_or_default();
        drop(messages);
        self.print(&message) as u64
    }

    /// Formats a finished message (`[stream, format string words, argument words...]`) and
    /// writes it to the program's stdout (stream 0) or stderr (1). Returns the bytes written.
    fn print(&self, message: &[u64]) -> usize {
        let Some((&stream, rest)) = message.split_first() else {
            tracing::error!(device = self.device, "hostcall printf: an empty message");
            return 0;
        };
        let mut args = Words { words: rest };
        let format = args.string();
        let text = format_message(&format, &mut args);
        let file = match stream {
            0 => c_stdio::stdout(),
            1 => c_stdio::stderr(),
            other => {
                tracing::error!(
                    device = self.device,
                    stream = other,
                    "hostcall printf: unknown output stream; printed to stderr"
                );
                c_stdio::stderr()
            }
        };
        // SAFETY: `file` is the C library's live stdout or stderr; `text` is readable.
        let written = unsafe { libc::fwrite(text.as_ptr().cast(), 1, text.len(), file) };
        if stream == 1 && contains(&text, b"Device-side assertion") {
            note_assertion(self.device, &text);
        }
        written
    }
}

/// The doorbell's handler: serves what was submitted and stays registered.
unsafe extern "C" fn on_doorbell(_value: hsa_signal_value_t, arg: *mut c_void) -> bool {
    crate::hsa::callback::guarded("the hostcall service", true, || {
        // SAFETY: `arg` is the leaked service registered with this handler.
        let service = unsafe { &*(arg as *const HostcallService) };
        service.serve();
        true
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The C library's standard streams, as the program's own `printf` and `fprintf` see them.
mod c_stdio {
    mod c {
        extern "C" {
            pub static stdout: *mut libc::FILE;
            pub static stderr: *mut libc::FILE;
        }
    }

    pub fn stdout() -> *mut libc::FILE {
        // SAFETY: the C library initialises its `stdout` before any code runs.
        unsafe { c::stdout }
    }

    pub fn stderr() -> *mut libc::FILE {
        // SAFETY: as above.
        unsafe { c::stderr }
    }
}

// ---------------------------------------------------------------------------------------
// printf formatting

/// The argument words of a message, read front to back.
struct Words<'a> {
    words: &'a [u64],
}

impl Words<'_> {
    /// The next argument word, 0 when the message has none left.
    fn word(&mut self) -> u64 {
        match self.words.split_first() {
            Some((&w, rest)) => {
                self.words = rest;
                w
            }
            None => 0,
        }
    }

    /// The next string: its bytes up to the terminating NUL, packed eight to a word, the word
    /// holding the NUL its last.
    fn string(&mut self) -> Vec<u8> {
        let mut bytes = Vec::new();
        while let Some((&w, rest)) = self.words.split_first() {
            self.words = rest;
            for b in w.to_le_bytes() {
                if b == 0 {
                    return bytes;
                }
                bytes.push(b);
            }
        }
        bytes
    }
}

/// Widths and precisions beyond this are clamped (a corrupt message must not make the
/// service allocate gigabytes).
const MAX_FIELD: i64 = 1 << 20;

/// Formats `format` as C's printf does, with the arguments of `args`: integers and pointers
/// one word each (narrowed as the length modifier says), floating point one word holding a
/// double, `%s` a string of words. Each conversion is done by the C library's `snprintf`
/// with a specification rebuilt from the parsed parts, so the digits are exactly the host's.
/// `%n` writes nothing (its argument is skipped); an incomplete or unknown conversion is
/// copied as it stands.
fn format_message(format: &[u8], args: &mut Words<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(format.len() + 32);
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            let end = format[i..]
                .iter()
                .position(|&b| b == b'%')
                .map_or(format.len(), |p| i + p);
            out.extend_from_slice(&format[i..end]);
            i = end;
            continue;
        }
        let start = i;
        i += 1;
        let mut flags = Vec::new();
        while let Some(&f @ (b'-' | b'+' | b' ' | b'#' | b'0')) = format.get(i) {
            flags.push(f);
            i += 1;
        }
        let mut width: Option<i64> = None;
        if format.get(i) == Some(&b'*') {
            i += 1;
            let w = i64::from(args.word() as i32);
            if w < 0 {
                flags.push(b'-');
            }
            width = Some(w.abs());
        } else {
            width = digits(format, &mut i).or(width);
        }
        let mut precision: Option<i64> = None;
        if format.get(i) == Some(&b'.') {
            i += 1;
            if format.get(i) == Some(&b'*') {
                i += 1;
                let p = i64::from(args.word() as i32);
                precision = (p >= 0).then_some(p);
            } else {
                precision = Some(digits(format, &mut i).unwrap_or(0));
            }
        }
        let length_start = i;
        while let Some(b'h' | b'l' | b'j' | b'z' | b't' | b'L' | b'q') = format.get(i) {
            i += 1;
        }
        let length = &format[length_start..i];
        let Some(&conversion) = format.get(i) else {
            out.extend_from_slice(&format[start..]);
            break;
        };
        i += 1;
        let spec = Spec {
            flags: &flags,
            width: width.map(|w| w.min(MAX_FIELD)),
            precision: precision.map(|p| p.min(MAX_FIELD)),
        };
        match conversion {
            b'%' => out.push(b'%'),
            b'd' | b'i' => {
                let w = args.word();
                let v: i64 = match length {
                    b"hh" => i64::from(w as i8),
                    b"h" => i64::from(w as i16),
                    b"" => i64::from(w as i32),
                    _ => w as i64,
                };
                spec.print(&mut out, b"ll", conversion, Value::Int(v));
            }
            b'u' | b'o' | b'x' | b'X' => {
                let w = args.word();
                let v: u64 = match length {
                    b"hh" => u64::from(w as u8),
                    b"h" => u64::from(w as u16),
                    b"" => u64::from(w as u32),
                    _ => w,
                };
                spec.print(&mut out, b"ll", conversion, Value::Int(v as i64));
            }
            b'c' => spec.print(
                &mut out,
                b"",
                b'c',
                Value::Int(i64::from(args.word() as i32)),
            ),
            b'p' => spec.print(&mut out, b"", b'p', Value::Pointer(args.word())),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => spec.print(
                &mut out,
                b"",
                conversion,
                Value::Double(f64::from_bits(args.word())),
            ),
            b's' => {
                let s = args.string();
                spec.print(&mut out, b"", b's', Value::Str(s));
            }
            b'n' => {
                args.word();
            }
            _ => out.extend_from_slice(&format[start..i]),
        }
    }
    out
}

fn digits(format: &[u8], i: &mut usize) -> Option<i64> {
    let start = *i;
    let mut value: i64 = 0;
    while let Some(&d @ b'0'..=b'9') = format.get(*i) {
        value = (value * 10 + i64::from(d - b'0')).min(MAX_FIELD);
        *i += 1;
    }
    (*i > start).then_some(value)
}

/// A conversion's parsed flags, width and precision.
struct Spec<'a> {
    flags: &'a [u8],
    width: Option<i64>,
    precision: Option<i64>,
}

enum Value {
    Int(i64),
    Pointer(u64),
    Double(f64),
    Str(Vec<u8>),
}

impl Spec<'_> {
    /// Appends one conversion, formatted by `snprintf` with `%FLAGS WIDTH .PRECISION LENGTH
    /// CONVERSION` (only characters this parser accepted).
    fn print(&self, out: &mut Vec<u8>, length: &[u8], conversion: u8, value: Value) {
        let mut spec = vec![b'%'];
        spec.extend_from_slice(self.flags);
        if let Some(w) = self.width {
            spec.extend_from_slice(w.to_string().as_bytes());
        }
        if let Some(p) = self.precision {
            spec.push(b'.');
            spec.extend_from_slice(p.to_string().as_bytes());
        }
        spec.extend_from_slice(length);
        spec.push(conversion);
        let Ok(spec) = CString::new(spec) else { return };
        // `%s` takes the bytes up to an embedded NUL, as C would.
        let string = match &value {
            Value::Str(s) => {
                let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                CString::new(&s[..end]).unwrap_or_default()
            }
            _ => CString::default(),
        };
        let call = |buffer: *mut c_char, size: usize| -> i32 {
            // SAFETY: `spec` is one conversion whose argument type matches the value passed
            // (`ll` integers as long long, `c` an int, `p` a pointer, floating conversions
            // a double, `s` a NUL-terminated string); `buffer` holds `size` bytes.
            unsafe {
                match &value {
                    Value::Int(v) if length == b"ll" => {
                        libc::snprintf(buffer, size, spec.as_ptr(), *v as libc::c_longlong)
                    }
                    Value::Int(v) => libc::snprintf(buffer, size, spec.as_ptr(), *v as libc::c_int),
                    Value::Pointer(p) => {
                        libc::snprintf(buffer, size, spec.as_ptr(), *p as usize as *const c_void)
                    }
                    Value::Double(d) => libc::snprintf(buffer, size, spec.as_ptr(), *d),
                    Value::Str(_) => libc::snprintf(buffer, size, spec.as_ptr(), string.as_ptr()),
                }
            }
        };
        let mut small = [0 as c_char; 128];
        let needed = call(small.as_mut_ptr(), small.len());
        let Ok(needed) = usize::try_from(needed) else {
            return;
        };
        if needed < small.len() {
            out.extend(small[..needed].iter().map(|&c| c as u8));
            return;
        }
        let mut big = vec![0 as c_char; needed + 1];
        let written = call(big.as_mut_ptr(), big.len());
        if let Ok(written) = usize::try_from(written) {
            out.extend(big[..written.min(needed)].iter().map(|&c| c as u8));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_of(strings_and_args: &[Result<&[u8], u64>]) -> Vec<u64> {
        let mut words = Vec::new();
        for item in strings_and_args {
            match item {
                Ok(s) => {
                    let mut bytes = s.to_vec();
                    bytes.push(0);
                    for chunk in bytes.chunks(8) {
                        let mut w = [0u8; 8];
                        w[..chunk.len()].copy_from_slice(chunk);
                        words.push(u64::from_le_bytes(w));
                    }
                }
                Err(v) => words.push(*v),
            }
        }
        words
    }

    fn format(items: &[Result<&[u8], u64>]) -> String {
        let words = words_of(items);
        let mut args = Words { words: &words };
        let format = args.string();
        String::from_utf8(format_message(&format, &mut args)).unwrap()
    }

    #[test]
    fn formats_like_c_printf() {
        assert_eq!(
            format(&[
                Ok(b"%d|%5i|%-5d|%+d|% d|%05d|%u|%x|%#X|%o|%c|%%"),
                Err(-7i32 as u32 as u64),
                Err(42),
                Err(3),
                Err(4),
                Err(5),
                Err(-6i32 as u32 as u64),
                Err(u64::from(u32::MAX)),
                Err(255),
                Err(255),
                Err(8),
                Err(u64::from(b'z')),
            ]),
            "-7|   42|3    |+4| 5|-0006|4294967295|ff|0XFF|10|z|%"
        );
        assert_eq!(
            format(&[
                Ok(b"%f %.2f %e %G %a %8.3f|%-8.1e|"),
                Err(1.5f64.to_bits()),
                Err(3.25159f64.to_bits()),
                Err(12345.678f64.to_bits()),
                Err(0.0001f64.to_bits()),
                Err(1.0f64.to_bits()),
                Err((-2.5f64).to_bits()),
                Err(100.0f64.to_bits()),
            ]),
            "1.500000 3.25 1.234568e+04 0.0001 0x1p+0   -2.500|1.0e+02 |"
        );
        assert_eq!(
            format(&[
                Ok(b"[%s] [%10s] [%-4.2s] [%*d] [%.*f] %ld %lld %hhd %hu %zu %p"),
                Ok(b"a string longer than eight bytes"),
                Ok(b"right"),
                Ok(b"left"),
                Err(6),
                Err(9),
                Err(1),
                Err(2.25f64.to_bits()),
                Err(-1i64 as u64),
                Err(1 << 40),
                Err(0x1ff),
                Err(0x1_0002),
                Err(7),
                Err(0x1234),
            ]),
            "[a string longer than eight bytes] [     right] [le  ] [     9] [2.2] -1 1099511627776 -1 2 7 0x1234"
        );
    }

    #[test]
    fn missing_arguments_read_zero_and_unknown_conversions_stay() {
        assert_eq!(format(&[Ok(b"%d %s|%y|%")]), "0 |%y|%");
    }
}
