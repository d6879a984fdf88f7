// hipshim HIP headers: the host API of libamdhip64.
//
// Declarations only; hipshim's libamdhip64.so (or AMD's) provides them. One header per
// area under hipshim/, in the order of AMD's documentation, so each area grows in place.
#ifndef HIP_HIP_RUNTIME_API_H
#define HIP_HIP_RUNTIME_API_H

#include <stddef.h>

#include "hipshim/hip_error.h"
#include "hipshim/hip_types.h"
#include "hipshim/host_defines.h"
#include "hipshim/launch.h"

#include "hipshim/api_device.h"
#include "hipshim/api_error.h"
#include "hipshim/api_memory.h"
#include "hipshim/api_managed.h"
#include "hipshim/api_array.h"
#include "hipshim/api_texture.h"
#include "hipshim/api_mempool.h"
#include "hipshim/api_vmm.h"
#include "hipshim/api_ipc.h"
#include "hipshim/api_stream.h"
#include "hipshim/api_event.h"
#include "hipshim/api_module.h"
#include "hipshim/api_context.h"
#include "hipshim/api_graph.h"
#include "hipshim/api_profile.h"

// Per-thread default stream: with HIP_API_PER_THREAD_DEFAULT_STREAM defined (clang defines it
// under -fgpu-default-stream=per-thread, which also makes <<<>>> call hipLaunchKernel_spt),
// the API calls below go to their `_spt` forms, in which the null stream means the calling
// thread's own stream instead of the legacy null stream.
#if defined(HIP_API_PER_THREAD_DEFAULT_STREAM)
#define hipMemcpy hipMemcpy_spt
#define hipMemset hipMemset_spt
#define hipMemcpy2D hipMemcpy2D_spt
#define hipMemset2D hipMemset2D_spt
#define hipMemcpyToSymbol hipMemcpyToSymbol_spt
#define hipMemcpyFromSymbol hipMemcpyFromSymbol_spt
#define hipMemcpyToSymbolAsync hipMemcpyToSymbolAsync_spt
#define hipMemcpyFromSymbolAsync hipMemcpyFromSymbolAsync_spt
#define hipMemcpyAsync hipMemcpyAsync_spt
#define hipMemcpy2DAsync hipMemcpy2DAsync_spt
#define hipMemsetAsync hipMemsetAsync_spt
#define hipStreamSynchronize hipStreamSynchronize_spt
#define hipStreamQuery hipStreamQuery_spt
#define hipStreamWaitEvent hipStreamWaitEvent_spt
#define hipStreamAddCallback hipStreamAddCallback_spt
#define hipLaunchHostFunc hipLaunchHostFunc_spt
#define hipStreamGetFlags hipStreamGetFlags_spt
#define hipStreamGetPriority hipStreamGetPriority_spt
#define hipEventRecord hipEventRecord_spt
#endif

#endif // HIP_HIP_RUNTIME_API_H
