//! `HSASIM_STRICT=1`: the AQL rules a command processor checks or silently depends on. A
//! lenient simulator runs such packets anyway; hardware reports an error, hangs or computes
//! garbage. In strict mode a packet that breaks one fails its queue like any invalid packet
//! (`HSA_STATUS_ERROR_INVALID_PACKET_FORMAT`), and the message names the rule, so a runtime
//! developed on hsasim finds the misuse before a real GPU does. Rules are checked on each
//! packet when the processor takes it, and on the doorbell: `header-written-last` (free ring
//! slots hold [`STALE_BODY`], so a header published over an unwritten body shows),
//! `doorbell-beyond-write-index` and `doorbell-monotonic` (single-producer queues).
//!
//! Sources: the HSA Platform System Architecture specification (AQL packet formats: reserved
//! fields and bits must be zero, unused dimensions are 1, fence scopes), LLVM `AMDGPUUsage`
//! (the kernarg segment is at least 16-byte aligned, the kernel descriptor is 64-byte aligned
//! and states the fixed group and private segment sizes the dispatch must provide), and the
//! 1024 work-item limit of a work-group on the devices hsasim models.

use hsa_abi::*;
use std::fmt;

/// A broken rule: its name (stable, for logs and tests) and what the packet had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "strict rule `{}`: {}", self.rule, self.detail)
    }
}

fn broken(rule: &'static str, detail: String) -> Result<(), Violation> {
    Err(Violation { rule, detail })
}

/// The minimum alignment of a kernarg segment (`AMDGPUUsage`: 16 bytes, or the kernel's
/// larger `.kernarg_segment_align`).
pub const KERNARG_ALIGN: u64 = 16;
/// Work-items in a work-group at most.
pub const MAX_WORKGROUP_SIZE: u64 = 1024;

/// The header bits every packet type shares: bits 13-15 reserved, fence scopes 0-2.
pub fn header(header: u16) -> Result<(), Violation> {
    if header >> 13 != 0 {
        return broken(
            "header-reserved-bits",
            format!("header {header:#06x} sets reserved bits 13-15"),
        );
    }
    for (name, shift) in [
        ("acquire", HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE),
        ("release", HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE),
    ] {
        let scope = (header >> shift) & 3;
        if scope == 3 {
            return broken(
                "header-fence-scope",
                format!("header {header:#06x} has {name} fence scope 3, which is reserved"),
            );
        }
    }
    Ok(())
}

/// A kernel dispatch packet against the kernel descriptor its `kernel_object` names (the
/// caller has checked that it is a loaded descriptor).
pub fn kernel_dispatch(
    p: &hsa_kernel_dispatch_packet_t,
    kd: &KernelDescriptor,
) -> Result<(), Violation> {
    header(p.header)?;
    let dims = p.setup & 3;
    if p.setup >> 2 != 0 || dims == 0 {
        return broken(
            "dispatch-setup",
            format!(
                "setup {:#06x}: dimensions must be 1, 2 or 3 and the other bits 0",
                p.setup
            ),
        );
    }
    if p.reserved0 != 0 || p.reserved2 != 0 {
        return broken(
            "dispatch-reserved",
            format!(
                "reserved fields are {:#x} and {:#x}, not 0",
                p.reserved0, p.reserved2
            ),
        );
    }
    let block = [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z];
    let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    for d in 0..3 {
        if usize::from(dims) <= d && (block[d] != 1 || grid[d] != 1) {
            return broken(
                "dispatch-unused-dimension",
                format!(
                    "dimension {d} is unused (setup says {dims}) but has work-group size {} and grid size {}; both must be 1",
                    block[d], grid[d]
                ),
            );
        }
        if block[d] == 0 || grid[d] == 0 {
            return broken(
                "dispatch-zero-size",
                format!(
                    "dimension {d} has work-group size {} and grid size {}",
                    block[d], grid[d]
                ),
            );
        }
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    if threads > MAX_WORKGROUP_SIZE {
        return broken(
            "dispatch-workgroup-size",
            format!("a work-group of {threads} work-items; the device allows {MAX_WORKGROUP_SIZE}"),
        );
    }
    if !p.kernel_object.is_multiple_of(64) {
        return broken(
            "kernel-object-alignment",
            format!(
                "kernel_object {:#x} is not 64-byte aligned",
                p.kernel_object
            ),
        );
    }
    if kd.kernarg_size > 0 && p.kernarg_address == 0 {
        return broken(
            "kernarg-address",
            format!(
                "the kernel takes {} bytes of kernargs but kernarg_address is null",
                kd.kernarg_size
            ),
        );
    }
    if !p.kernarg_address.is_multiple_of(KERNARG_ALIGN) {
        return broken(
            "kernarg-alignment",
            format!(
                "kernarg_address {:#x} is not {KERNARG_ALIGN}-byte aligned",
                p.kernarg_address
            ),
        );
    }
    if p.group_segment_size < kd.group_segment_fixed_size {
        return broken(
            "group-segment-size",
            format!(
                "group_segment_size {} is less than the {} bytes of LDS the kernel declares",
                p.group_segment_size, kd.group_segment_fixed_size
            ),
        );
    }
    if p.private_segment_size < kd.private_segment_fixed_size {
        return broken(
            "private-segment-size",
            format!(
                "private_segment_size {} is less than the {} bytes of scratch per work-item the kernel declares",
                p.private_segment_size, kd.private_segment_fixed_size
            ),
        );
    }
    Ok(())
}

/// A doorbell value against the queue's write index: a producer rings for packets it has
/// reserved, so the value is always below the write index. (Several producers may ring out
/// of order, so the value need not grow; hipshim's shared queues do that.) A fresh doorbell
/// reads 0 before anyone rings, which is no violation on an empty queue.
pub fn doorbell(rung: i64, write_index: u64) -> Result<(), Violation> {
    let fresh = rung == 0 && write_index == 0;
    if rung >= 0 && rung as u64 >= write_index && !fresh {
        return broken(
            "doorbell-beyond-write-index",
            format!(
                "the doorbell was rung with {rung}, but only packets below write index {write_index} were reserved"
            ),
        );
    }
    Ok(())
}

/// A single-producer queue's doorbell only moves forward: its producer rings with the last
/// packet it published, so a lower value means a stale or miscomputed index (the command
/// processor takes the doorbell as its write pointer). Several producers may legitimately
/// ring out of order (the HSA multi-producer model), so multi-producer queues are exempt.
pub fn doorbell_monotonic(fell_back_from: Option<i64>, now: i64) -> Result<(), Violation> {
    match fell_back_from {
        Some(from) => broken(
            "doorbell-monotonic",
            format!(
                "the doorbell of this single-producer queue was rung with {from} and later \
                 with a lower value (it reads {now} now)"
            ),
        ),
        None => Ok(()),
    }
}

/// A barrier-AND or barrier-OR packet: its reserved fields are 0.
pub fn barrier(p: &hsa_barrier_and_packet_t) -> Result<(), Violation> {
    header(p.header)?;
    if p.reserved0 != 0 || p.reserved1 != 0 || p.reserved2 != 0 {
        return broken(
            "barrier-reserved",
            format!(
                "reserved fields are {:#x}, {:#x} and {:#x}, not 0",
                p.reserved0, p.reserved1, p.reserved2
            ),
        );
    }
    Ok(())
}

/// AMD's barrier-value packet: the header rules, and reserved fields 0 (hsa_ext_amd.h).
pub fn barrier_value(p: &hsa_amd_barrier_value_packet_t) -> Result<(), Violation> {
    header(p.header)?;
    if p.reserved != 0
        || p.reserved0 != 0
        || p.reserved1 != 0
        || p.reserved2 != 0
        || p.reserved3 != 0
    {
        return broken(
            "barrier-value-reserved",
            format!(
                "reserved fields are {:#x}, {:#x}, {:#x}, {:#x} and {:#x}, not 0",
                p.reserved, p.reserved0, p.reserved1, p.reserved2, p.reserved3
            ),
        );
    }
    Ok(())
}

/// What strict mode leaves in the body (bytes 8-63) of every free ring slot: no packet holds
/// it (as an address it is non-canonical; as sizes, a grid of billions twice over), so a
/// packet seen with a valid header and this pattern in its body was published before its
/// body was written.
pub const STALE_BODY: u64 = 0x5eed_5eed_5eed_5eed;

/// A packet whose header is valid must have its body written: the header is the last thing a
/// producer stores (with release semantics), since the packet processor may read the packet
/// the moment the header is valid, doorbell or not.
pub fn body_written(words: &[u64; 8]) -> Result<(), Violation> {
    match words[1..].iter().position(|&w| w == STALE_BODY) {
        Some(i) => broken(
            "header-written-last",
            format!(
                "the header is valid but bytes {}-{} still hold the fill pattern of a free \
                 slot ({STALE_BODY:#x}): the header was stored before the body; store the \
                 body first and the header last, with a release store",
                8 * (i + 1),
                8 * (i + 1) + 7
            ),
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_still_holding_the_fill_pattern_breaks_header_written_last() {
        let mut words = [0u64; 8];
        words[0] = STALE_BODY; // header, setup, work-group sizes: not body
        assert_eq!(body_written(&words), Ok(()));
        words[6] = STALE_BODY;
        let v = body_written(&words).unwrap_err();
        assert_eq!(v.rule, "header-written-last");
        assert!(v.detail.contains("bytes 48-55"), "{}", v.detail);
    }

    fn good() -> (hsa_kernel_dispatch_packet_t, KernelDescriptor) {
        let packet = hsa_kernel_dispatch_packet_t {
            header: (HSA_PACKET_TYPE_KERNEL_DISPATCH)
                | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
                | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE),
            setup: 1,
            workgroup_size_x: 64,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: 256,
            grid_size_y: 1,
            grid_size_z: 1,
            group_segment_size: 512,
            private_segment_size: 16,
            kernel_object: 0x10_0000,
            kernarg_address: 0x20_0010,
            ..Default::default()
        };
        let kd = KernelDescriptor {
            group_segment_fixed_size: 512,
            private_segment_fixed_size: 16,
            kernarg_size: 16,
            ..Default::default()
        };
        (packet, kd)
    }

    #[test]
    fn each_broken_dispatch_rule_is_named() {
        let (p, kd) = good();
        assert_eq!(kernel_dispatch(&p, &kd), Ok(()));
        type Breaks = fn(&mut hsa_kernel_dispatch_packet_t);
        let cases: [(&str, Breaks); 12] = [
            ("header-reserved-bits", |p| p.header |= 1 << 14),
            ("header-fence-scope", |p| {
                p.header |= 3 << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE
            }),
            ("dispatch-setup", |p| p.setup = 0),
            ("dispatch-setup", |p| p.setup = 1 | 1 << 4),
            ("dispatch-reserved", |p| p.reserved2 = 1),
            ("dispatch-unused-dimension", |p| p.grid_size_y = 4),
            ("dispatch-zero-size", |p| p.grid_size_x = 0),
            ("dispatch-workgroup-size", |p| {
                p.setup = 2;
                p.workgroup_size_y = 32;
            }),
            ("kernel-object-alignment", |p| p.kernel_object += 8),
            ("kernarg-alignment", |p| p.kernarg_address += 8),
            ("group-segment-size", |p| p.group_segment_size = 256),
            ("private-segment-size", |p| p.private_segment_size = 0),
        ];
        for (rule, breaks) in cases {
            let mut bad = p;
            breaks(&mut bad);
            let violation = kernel_dispatch(&bad, &kd).unwrap_err();
            assert_eq!(violation.rule, rule, "{violation}");
            assert!(violation
                .to_string()
                .starts_with(&format!("strict rule `{rule}`")));
        }
        let mut no_kernargs = p;
        no_kernargs.kernarg_address = 0;
        assert_eq!(
            kernel_dispatch(&no_kernargs, &kd).unwrap_err().rule,
            "kernarg-address"
        );
        let kd_without_args = KernelDescriptor {
            kernarg_size: 0,
            ..kd
        };
        assert_eq!(kernel_dispatch(&no_kernargs, &kd_without_args), Ok(()));
    }

    #[test]
    fn doorbells_stay_below_the_write_index() {
        assert_eq!(doorbell(-1, 0), Ok(()));
        assert_eq!(doorbell(0, 0), Ok(()), "a fresh doorbell");
        assert_eq!(doorbell(4, 5), Ok(()));
        assert_eq!(
            doorbell(5, 5).unwrap_err().rule,
            "doorbell-beyond-write-index"
        );
    }

    #[test]
    fn barrier_reserved_fields_are_checked() {
        let p = hsa_barrier_and_packet_t {
            header: HSA_PACKET_TYPE_BARRIER_AND,
            ..Default::default()
        };
        assert_eq!(barrier(&p), Ok(()));
        let bad = hsa_barrier_and_packet_t { reserved1: 7, ..p };
        assert_eq!(barrier(&bad).unwrap_err().rule, "barrier-reserved");
    }
}
