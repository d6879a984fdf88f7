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

// AMD's callback interface for tracing tools. ROCm 5.0-5.2 (the ROCm 5 profile only; later
// runtimes answer hipErrorNotSupported): per callback id (hip_api_id_t) an activity callback
// `void* act(uint32_t id, activity_record_t*, const void*, void* arg)`, which hands out the
// hip_api_data_t record, and an API callback `void fun(uint32_t domain, uint32_t id,
// const void* data, void* arg)`, called at the call's entry and exit; for device work an id
// callback `void(uint64_t record_id)` and an op callback `void(uint32_t op,
// activity_record_t*, void* arg)`, per op (0 dispatch, 1 copy) switched on with
// hipEnableActivityCallback.
hipError_t hipRegisterApiCallback(uint32_t id, void* fun, void* arg);
hipError_t hipRemoveApiCallback(uint32_t id);
hipError_t hipRegisterActivityCallback(uint32_t id, void* fun, void* arg);
hipError_t hipRemoveActivityCallback(uint32_t id);
void hipInitActivityCallback(void* id_callback, void* op_callback, void* arg);
bool hipEnableActivityCallback(uint32_t op, bool enable);
// ROCm 5.3 on (every profile): `report(domain, id, data)` gets every call (domain 3,
// hip_api_trace_data_t) and every completed dispatch or copy (domain 2, activity_record_t);
// AMD's headers do not declare it (roctracer does).
void hipRegisterTracerCallback(int (*report)(uint32_t domain, uint32_t operation_id, void* data));

} // extern "C"

#endif
