//! Stream waits on a value in memory (`hipStreamWaitValue32/64`): the stream's later work
//! waits, on the device, until a 32- or 64-bit value the program's other work (another
//! stream, the host, another process) writes meets a condition. Writes in stream order
//! (`hipStreamWriteValue32/64`) are copies of a value and live with them (`copy.rs`).
//!
//! ## Design
//! A wait is one AMD barrier-value packet on the stream's queue, counted like a kernel: the
//! packet processor holds the queue until `(value & mask) cond reference` holds, so later
//! packets (and, through the stream's markers, other streams and events that wait for it)
//! wait on the device and the host never does. The packet names a signal; the value waited on
//! is the program's memory, so the packet names the "signal" whose value field
//! (`amd_signal_t::value`, 8 bytes in) is that memory: a GPU's packet processor reads the
//! value at that address whatever the handle, and hsasim does the same for memory its agent
//! reaches. (AMD's runtime waits with this packet only on memory allocated with
//! `hipMallocSignalMemory`, which is a signal's value, and otherwise with a kernel that spins
//! on the memory; a spinning kernel would hold a compute queue, and hsasim's deterministic
//! mode would run it forever on the waiting thread.)
//!
//! The packet holds its whole queue: streams the policy put on the same queue wait behind
//! it too, and if one of them is what writes the value, they deadlock (as under AMD's runtime
//! when streams share a hardware queue). The guide says so; giving a waiting stream a queue of
//! its own would be the policy's job.
//!
//! The packet reads 8 bytes, 8-byte aligned. A 32-bit value in the upper half of its 8-byte
//! word is waited on as that word's upper half (value and mask shifted up), so the read never
//! leaves the page the value is in. The packet's conditions are EQ, NE, LT and GTE on the
//! masked value, compared unsigned; HIP's four map onto them as AMD's runtime maps them:
//!
//! | flag | holds when | packet |
//! | --- | --- | --- |
//! | `hipStreamWaitValueGte` | `(*ptr & mask) >= value` | GTE `value`, `mask` |
//! | `hipStreamWaitValueEq` | `(*ptr & mask) == value` | EQ `value`, `mask` |
//! | `hipStreamWaitValueAnd` | `(*ptr & mask & value) != 0` | NE 0, mask `value & mask` |
//! | `hipStreamWaitValueNor` | a bit of `mask` is clear in both `*ptr` and `value` | NE `m`, mask `m = !value & mask` |

use crate::error::{HipError, HipResult};
use crate::hsa::queue::barrier_value;
use crate::runtime::devices::device::Device;
use crate::runtime::mem::memory::{classify, Side};
use hsa_abi::*;
use std::ffi::c_void;

/// `hipStreamWaitValueGte`, `Eq`, `And`, `Nor` (hip_runtime_api.h).
pub const WAIT_GTE: u32 = 0;
pub const WAIT_EQ: u32 = 1;
pub const WAIT_AND: u32 = 2;
pub const WAIT_NOR: u32 = 3;

/// The packet a wait is: (reference value, mask, condition) on the value's 8-byte word.
fn condition(flags: u32, value: u64, mask: u64) -> Option<(u64, u64, u32)> {
    Some(match flags {
        WAIT_GTE => (value, mask, HSA_SIGNAL_CONDITION_GTE),
        WAIT_EQ => (value, mask, HSA_SIGNAL_CONDITION_EQ),
        WAIT_AND => (0, value & mask, HSA_SIGNAL_CONDITION_NE),
        WAIT_NOR => {
            let clear = !value & mask;
            (clear, clear, HSA_SIGNAL_CONDITION_NE)
        }
        _ => return None,
    })
}

/// `hipStreamWaitValue32` (`bytes` 4) and `hipStreamWaitValue64` (`bytes` 8): `stream`'s later
/// work waits until the value at `ptr` meets `flags`' condition under `mask`. `ptr` must be
/// naturally aligned device memory or host memory the devices reach (pinned, registered,
/// managed).
pub fn wait_value(
    devices: &[Device],
    stream: *mut c_void,
    ptr: *mut c_void,
    value: u64,
    flags: u32,
    mask: u64,
    bytes: usize,
) -> HipResult {
    let wait = Wait::check(ptr, value, flags, mask, bytes)?;
    let (device, s) = super::lookup(devices, stream)?;
    wait.submit(device, &s)
}

/// A wait whose arguments are checked: the barrier-value packet it becomes, less its
/// completion signal. Checking apart from submitting lets a batch refuse a bad operation
/// before any of its operations is enqueued.
#[derive(Clone, Copy, Debug)]
pub struct Wait {
    signal: hsa_signal_t,
    reference: u64,
    mask: u64,
    cond: u32,
}

impl Wait {
    /// Checks a wait as `wait_value` describes it.
    pub fn check(
        ptr: *mut c_void,
        value: u64,
        flags: u32,
        mask: u64,
        bytes: usize,
    ) -> HipResult<Wait> {
        let width_mask = if bytes == 4 {
            u32::MAX as u64
        } else {
            u64::MAX
        };
        let Some((reference, mask, cond)) = condition(flags, value & width_mask, mask & width_mask)
        else {
            tracing::warn!(
                flags,
                "hipStreamWaitValue: flags are not a hipStreamWaitValue condition"
            );
            return Err(HipError::INVALID_VALUE);
        };
        let at = checked_target(ptr, bytes, "hipStreamWaitValue")?;
        let address = match classify(at, bytes, None, "stream wait value")? {
            Side::Device(_) => at,
            // Registered memory is reached at the address its lock returned.
            Side::Pinned(agent_address) => agent_address,
            Side::Pageable => return Err(not_device_accessible("hipStreamWaitValue", at)),
        };
        // The value's 8-byte word, and where the value sits in it.
        let shift = (address % 8) * 8;
        let word = (address - address % 8) as u64;
        Ok(Wait {
            signal: hsa_signal_t {
                handle: word.wrapping_sub(std::mem::offset_of!(amd_signal_t, value) as u64),
            },
            reference: reference << shift,
            mask: mask << shift,
            cond,
        })
    }

    /// Publishes the wait on `stream` of `device`.
    pub fn submit(self, device: &Device, stream: &super::Stream) -> HipResult {
        stream.submit_counted_barrier(&device.streams, |completion| {
            barrier_value(
                self.signal,
                self.reference,
                self.mask,
                self.cond,
                completion,
            )
        })
    }
}

/// `hipStreamBatchMemOpParams` (hip_runtime_api.h, ROCm 6.4 on): a 48-byte union whose first
/// word is the operation. The wait and write forms share one layout (`address` at 8, the value
/// at 16 as a 32- or 64-bit union member, `flags` at 24, `alias` at 32, unused on AMD GPUs);
/// the flush and barrier forms keep their flags in the word at 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchMemOpParams {
    pub operation: u32,
    /// `flushRemoteWrites.flags` / `memoryBarrier.flags`.
    pub short_flags: u32,
    pub address: u64,
    /// `value` (the low 4 bytes) or `value64`.
    pub value: u64,
    pub flags: u32,
    pub _pad: u32,
    pub alias: u64,
    pub _rest: u64,
}

// The layout of AMD's union, as its members place the fields.
const _: () = {
    assert!(std::mem::size_of::<BatchMemOpParams>() == 48);
    assert!(std::mem::align_of::<BatchMemOpParams>() == 8);
    assert!(std::mem::offset_of!(BatchMemOpParams, short_flags) == 4);
    assert!(std::mem::offset_of!(BatchMemOpParams, address) == 8);
    assert!(std::mem::offset_of!(BatchMemOpParams, value) == 16);
    assert!(std::mem::offset_of!(BatchMemOpParams, flags) == 24);
    assert!(std::mem::offset_of!(BatchMemOpParams, alias) == 32);
};

/// `hipStreamBatchMemOpType`.
pub const MEM_OP_WAIT_VALUE_32: u32 = 1;
pub const MEM_OP_WRITE_VALUE_32: u32 = 2;
pub const MEM_OP_FLUSH_REMOTE_WRITES: u32 = 3;
pub const MEM_OP_WAIT_VALUE_64: u32 = 4;
pub const MEM_OP_WRITE_VALUE_64: u32 = 5;
pub const MEM_OP_BARRIER: u32 = 6;

/// At most this many operations in one `hipStreamBatchMemOp` (AMD's limit, as CUDA's).
pub const BATCH_MAX: usize = 256;

/// One operation of a batch, read from its C form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOp {
    /// A wait on the whole value (a batch's wait has no mask).
    Wait {
        ptr: usize,
        value: u64,
        flags: u32,
        bytes: usize,
    },
    Write {
        ptr: usize,
        value: u64,
        bytes: usize,
    },
}

impl MemOp {
    /// The operation `params` describes. AMD's runtime refuses the flush and barrier
    /// operations (its header marks them unsupported), and so does hipshim, so that a program
    /// does not rely on a flush that AMD's runtime would not do.
    pub fn read(params: &BatchMemOpParams, index: usize) -> HipResult<MemOp> {
        let (ptr, value) = (params.address as usize, params.value);
        match params.operation {
            MEM_OP_WAIT_VALUE_32 => Ok(MemOp::Wait {
                ptr,
                value: value & u32::MAX as u64,
                flags: params.flags,
                bytes: 4,
            }),
            MEM_OP_WAIT_VALUE_64 => Ok(MemOp::Wait {
                ptr,
                value,
                flags: params.flags,
                bytes: 8,
            }),
            MEM_OP_WRITE_VALUE_32 => Ok(MemOp::Write {
                ptr,
                value: value & u32::MAX as u64,
                bytes: 4,
            }),
            MEM_OP_WRITE_VALUE_64 => Ok(MemOp::Write {
                ptr,
                value,
                bytes: 8,
            }),
            op @ (MEM_OP_FLUSH_REMOTE_WRITES | MEM_OP_BARRIER) => {
                tracing::warn!(index, operation = op, "hipStreamBatchMemOp: the flush and barrier operations are not supported (as in AMD's runtime)");
                Err(HipError::INVALID_VALUE)
            }
            op => {
                tracing::warn!(
                    index,
                    operation = op,
                    "hipStreamBatchMemOp: not a hipStreamBatchMemOpType"
                );
                Err(HipError::INVALID_VALUE)
            }
        }
    }
}

/// `ptr` as an address, if it is not null and is aligned to `bytes`.
pub fn checked_target(ptr: *mut c_void, bytes: usize, call: &str) -> HipResult<usize> {
    let at = ptr as usize;
    if at == 0 || !at.is_multiple_of(bytes) {
        tracing::warn!(
            ptr = format_args!("{ptr:p}"),
            bytes,
            "{call}: the pointer is null or not aligned to its {bytes}-byte value"
        );
        return Err(HipError::INVALID_VALUE);
    }
    Ok(at)
}

/// Memory no device reaches: a stream memory operation on it is hipErrorInvalidValue.
#[cold]
pub fn not_device_accessible(call: &str, at: usize) -> HipError {
    tracing::warn!(
        ptr = format_args!("{at:#x}"),
        "{call}: the memory is neither device memory nor host memory the devices reach (pinned, registered or managed)"
    );
    HipError::INVALID_VALUE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the packet processor checks: `(x & mask) cond reference`, unsigned.
    fn holds(x: u64, (reference, mask, cond): (u64, u64, u32)) -> bool {
        let masked = x & mask;
        match cond {
            HSA_SIGNAL_CONDITION_EQ => masked == reference,
            HSA_SIGNAL_CONDITION_NE => masked != reference,
            HSA_SIGNAL_CONDITION_GTE => masked >= reference,
            _ => unreachable!(),
        }
    }

    #[test]
    fn each_condition_holds_exactly_where_hip_says() {
        let samples = [
            0u64,
            1,
            2,
            3,
            5,
            0x0f,
            0xf0,
            0xff,
            0x100,
            u32::MAX as u64,
            u64::MAX,
        ];
        for &mask in &[u64::MAX, 0xff, 0x0f, 0xf0] {
            for &value in &samples {
                for &x in &samples {
                    let c = |flags| condition(flags, value, mask).unwrap();
                    assert_eq!(holds(x, c(WAIT_GTE)), x & mask >= value);
                    assert_eq!(holds(x, c(WAIT_EQ)), x & mask == value);
                    assert_eq!(holds(x, c(WAIT_AND)), (x & mask) & value != 0);
                    assert_eq!(
                        holds(x, c(WAIT_NOR)),
                        !((x & mask) | (value & mask)) & mask != 0,
                        "x {x:#x} value {value:#x} mask {mask:#x}"
                    );
                }
            }
        }
        assert_eq!(condition(4, 0, 0), None);
    }

    #[test]
    fn batch_operations_read_their_union_member() {
        let params = |operation, value, flags| BatchMemOpParams {
            operation,
            address: 0x1000,
            value,
            flags,
            ..Default::default()
        };
        // A 32-bit operation takes the low half of the value union only.
        assert_eq!(
            MemOp::read(&params(MEM_OP_WAIT_VALUE_32, 0xdead_0000_0007, WAIT_EQ), 0),
            Ok(MemOp::Wait {
                ptr: 0x1000,
                value: 7,
                flags: WAIT_EQ,
                bytes: 4
            })
        );
        assert_eq!(
            MemOp::read(&params(MEM_OP_WRITE_VALUE_64, u64::MAX, 0), 0),
            Ok(MemOp::Write {
                ptr: 0x1000,
                value: u64::MAX,
                bytes: 8
            })
        );
        assert_eq!(
            MemOp::read(&params(MEM_OP_WRITE_VALUE_32, 0x1_0000_0002, 0), 0),
            Ok(MemOp::Write {
                ptr: 0x1000,
                value: 2,
                bytes: 4
            })
        );
        for refused in [MEM_OP_FLUSH_REMOTE_WRITES, MEM_OP_BARRIER, 0, 7, u32::MAX] {
            assert_eq!(
                MemOp::read(&params(refused, 0, 0), 3),
                Err(HipError::INVALID_VALUE),
                "operation {refused}"
            );
        }
    }
}
