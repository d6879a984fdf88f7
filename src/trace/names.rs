//! The names AMD's tracing interface gives numbers: HIP calls by their callback id
//! (`hipApiName`, ids of `hip_api_id_t`, kept in `abi/hip_api_ids.txt`) and runtime commands by
//! their command kind (`hipGetCmdName`, OpenCL's `cl_command_type` values that AMD's runtime
//! reports its commands under). Tools written for roctracer print these; each answer is a
//! static NUL-terminated string, never null.

use std::ffi::CStr;
use std::sync::LazyLock;

/// What `hipApiName` answers for an id no HIP call has (AMD's word).
pub const UNKNOWN_API: &CStr = c"unknown";
/// What `hipGetCmdName` answers for a kind AMD's runtime does not name (AMD's words).
pub const UNKNOWN_COMMAND: &CStr = c"Unknown command kind";

/// `hip_api_id_t` by id: `abi/hip_api_ids.txt`, each name NUL-terminated, in one leaked block
/// made once (the strings live as long as the process, as the C contract wants).
static API_NAMES: LazyLock<Vec<Option<&'static CStr>>> = LazyLock::new(|| {
    let list = include_str!("../../abi/hip_api_ids.txt");
    let mut names: Vec<Option<&'static CStr>> = Vec::new();
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split_whitespace();
        let (Some(id), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(id) = id.parse::<usize>() else {
            continue;
        };
        let Ok(name) = std::ffi::CString::new(name) else {
            continue;
        };
        if names.len() <= id {
            names.resize(id + 1, None);
        }
        names[id] = Some(Box::leak(name.into_boxed_c_str()));
    }
    names
});

/// `hipApiName`: the HIP call with callback id `id`.
pub fn api_name(id: u32) -> &'static CStr {
    API_NAMES
        .get(id as usize)
        .copied()
        .flatten()
        .unwrap_or(UNKNOWN_API)
}

/// `hipGetCmdName`: the command kind `kind` (AMD's runtime names the OpenCL command types its
/// commands are, plus its own stream wait and write).
pub fn command_name(kind: u32) -> &'static CStr {
    match kind {
        0 => c"InternalMarker",
        0x11F0 => c"KernelExecution",
        0x11F1 => c"Task",
        0x11F2 => c"NativeKernel",
        0x11F3 => c"CopyDeviceToHost",
        0x11F4 => c"CopyHostToDevice",
        0x11F5 => c"CopyDeviceToDevice",
        0x11F6 => c"ReadImage",
        0x11F7 => c"WriteImage",
        0x11F8 => c"CopyImage",
        0x11F9 => c"CopyImageToBuffer",
        0x11FA => c"CopyBufferToImage",
        0x11FB => c"MapBuffer",
        0x11FC => c"MapImage",
        0x11FD => c"UnmapMemObject",
        0x11FE => c"Marker",
        0x11FF => c"AcquireGLObjects",
        0x1200 => c"ReleaseGLObjects",
        0x1201 => c"CopyDeviceToHost2D",
        0x1202 => c"CopyHostToDevice2D",
        0x1203 => c"CopyDeviceToDevice2D",
        0x1204 => c"User",
        0x1205 => c"Barrier",
        0x1206 => c"MigrateMemObjects",
        0x1207 => c"FillBuffer",
        0x1208 => c"FillImage",
        0x1209 => c"SvmFree",
        0x120A => c"SvmMemcpy",
        0x120B => c"SvmMemFill",
        0x120C => c"SvmMap",
        0x120D => c"SvmUnmap",
        0x4501 => c"StreamWait",
        0x4502 => c"StreamWrite",
        _ => UNKNOWN_COMMAND,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_ids_name_amds_calls() {
        assert_eq!(api_name(1), c"__hipPopCallConfiguration");
        assert_eq!(api_name(48), c"hipDeviceSynchronize");
        assert_eq!(api_name(107), c"hipLaunchKernel");
        assert_eq!(api_name(108), c"hipMalloc");
        assert_eq!(api_name(408), c"hipStreamBatchMemOp");
        assert_eq!(api_name(446), c"hipOccupancyAvailableDynamicSMemPerBlock");
        // No call has 0, a reserved id or one past the list.
        for id in [0, 393, 399, 407, 447, u32::MAX] {
            assert_eq!(api_name(id), UNKNOWN_API, "id {id}");
        }
    }

    #[test]
    fn the_id_list_has_each_id_once() {
        let list = include_str!("../../abi/hip_api_ids.txt");
        let mut seen = std::collections::BTreeSet::new();
        for line in list.lines().filter(|l| !l.starts_with('#')) {
            let id: u32 = line.split_whitespace().next().unwrap().parse().unwrap();
            assert!(seen.insert(id), "id {id} twice");
        }
        assert_eq!(seen.len(), 438);
    }

    #[test]
    fn command_kinds_name_amds_commands() {
        assert_eq!(command_name(0x11F0), c"KernelExecution");
        assert_eq!(command_name(0x1207), c"FillBuffer");
        assert_eq!(command_name(0x4501), c"StreamWait");
        assert_eq!(command_name(0x1234), UNKNOWN_COMMAND);
    }
}
