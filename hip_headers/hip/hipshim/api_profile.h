// AMD's tracing and profiling interface: names for callback ids and command kinds.
#ifndef HIPSHIM_API_PROFILE_H
#define HIPSHIM_API_PROFILE_H

#include <stdint.h>

#include "hip_error.h"

extern "C" {

// The name of the HIP call with this callback id (AMD's hip_api_id_t), "unknown" for none.
const char* hipApiName(uint32_t id);
// The name of a runtime command kind, "Unknown command kind" for one AMD does not name.
const char* hipGetCmdName(uint32_t op);
// hipSuccess under the ROCm 7 profile, hipErrorNotSupported before (as AMD's runtime answers);
// they switch nothing in hipshim, whose recorder is HIPSHIM_TRACE.
hipError_t hipProfilerStart();
hipError_t hipProfilerStop();

} // extern "C"

#endif
