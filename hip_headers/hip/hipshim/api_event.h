// Events: markers recorded into streams.
#ifndef HIPSHIM_API_EVENT_H
#define HIPSHIM_API_EVENT_H

#include "hip_error.h"
#include "hip_types.h"

typedef struct ihipEvent_t* hipEvent_t;

// Event creation flags.
#define hipEventDefault 0x0
#define hipEventBlockingSync 0x1  // hipEventSynchronize sleeps instead of spinning
#define hipEventDisableTiming 0x2 // no timestamps: hipEventElapsedTime refuses it
#define hipEventInterprocess 0x4  // with hipEventDisableTiming; see hipIpcGetEventHandle
// AMD's release-scope hints (accepted; hipshim's markers always release to the system). At
// most one of the two release flags.
#define hipEventDisableSystemFence 0x20000000
#define hipEventReleaseToDevice 0x40000000
#define hipEventReleaseToSystem 0x80000000

extern "C" {

hipError_t hipEventCreate(hipEvent_t* event);
hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags);
// A marker after all earlier work of `stream` (0 is the null stream).
hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream);
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
// ROCm 6.4: hipEventRecordExternal on a capturing stream adds an event record node to the
// graph; otherwise, and with hipEventRecordDefault, this is hipEventRecord.
#define hipEventRecordDefault 0x0
#define hipEventRecordExternal 0x1
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);
hipError_t hipEventSynchronize(hipEvent_t event);
// hipSuccess when complete (or never recorded), hipErrorNotReady when not.
hipError_t hipEventQuery(hipEvent_t event);
// Milliseconds between two completed records. hipErrorInvalidHandle if either was
// never recorded or has hipEventDisableTiming; hipErrorNotReady if not complete.
hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop);
hipError_t hipEventDestroy(hipEvent_t event);

} // extern "C"

#endif // HIPSHIM_API_EVENT_H
