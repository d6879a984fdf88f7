// hipshim HIP headers: everything a HIP source file includes.
//
// Build with a stock clang (scripts/build-hip.sh has the full command):
//   clang++-19 -x hip --offload-arch=gfx942 -O3 -nogpuinc
//       --rocm-device-lib-path=DIR -I hip_headers prog.hip -L LIBDIR -lamdhip64
// A host-only C++ compiler may include it too: it then sees the host API only.
#ifndef HIP_HIP_RUNTIME_H
#define HIP_HIP_RUNTIME_H

#include "hip_runtime_api.h"

#if defined(__HIP__)
#include "hipshim/device_builtins.h"
#include "hipshim/device_math.h"
#include "hipshim/device_warp.h"
#include "hipshim/device_atomics.h"
#include "hipshim/device_print.h"
#endif

#endif // HIP_HIP_RUNTIME_H
