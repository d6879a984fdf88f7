//! Stream attributes (`hipStreamSetAttribute`, `hipStreamGetAttribute`,
//! `hipStreamCopyAttributes`). As in AMD's runtime, the synchronization policy is the one
//! attribute a program can set; the priority can be read.

use super::{Stream, SyncPolicy};
use crate::error::{HipError, HipResult};
use std::sync::atomic::Ordering;

/// `hipLaunchAttributeID` values that name stream attributes (`hipStreamAttrID`).
pub const SYNCHRONIZATION_POLICY: u32 = 3;
pub const PRIORITY: u32 = 8;

/// `value` is the first word of a `hipStreamAttrValue` (its `syncPolicy`).
pub fn set(stream: &Stream, attr: u32, value: u32) -> HipResult {
    if stream.capturing.load(Ordering::Relaxed) {
        tracing::error!("hipStreamSetAttribute: the stream is capturing");
        return Err(HipError::STREAM_CAPTURE_UNSUPPORTED);
    }
    if attr != SYNCHRONIZATION_POLICY {
        tracing::error!(
            attr,
            "hipStreamSetAttribute: only the synchronization policy (3) can be set"
        );
        return Err(HipError::INVALID_VALUE);
    }
    let policy = SyncPolicy::from_hip(value).ok_or_else(|| {
        tracing::error!(
            policy = value,
            "hipStreamSetAttribute: not a hipSynchronizationPolicy (1 to 4)"
        );
        HipError::INVALID_VALUE
    })?;
    stream.set_sync_policy(policy);
    Ok(())
}

/// The first word of a `hipStreamAttrValue`: its `syncPolicy` or its `priority`.
pub fn get(stream: &Stream, attr: u32) -> HipResult<i32> {
    match attr {
        SYNCHRONIZATION_POLICY => Ok(stream.sync_policy() as i32),
        PRIORITY => Ok(stream.priority.to_hip()),
        _ => {
            tracing::error!(
                attr,
                "hipStreamGetAttribute: only the synchronization policy (3) and the priority (8) can be read"
            );
            Err(HipError::INVALID_VALUE)
        }
    }
}

/// Copies what can be set: the synchronization policy.
pub fn copy(dst: &Stream, src: &Stream) {
    dst.set_sync_policy(src.sync_policy());
}
