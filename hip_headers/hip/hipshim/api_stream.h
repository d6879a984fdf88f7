// Streams, stream callbacks, per-thread streams, and stream-ordered memory operations.
#ifndef HIPSHIM_API_STREAM_H
#define HIPSHIM_API_STREAM_H

#include "api_event.h"
#include "hip_error.h"
#include "hip_types.h"
#include "launch.h"

// Stream creation flags.
#define hipStreamDefault 0x00     // ordered with the null stream (legacy semantics)
#define hipStreamNonBlocking 0x01 // no implicit ordering with the null stream

// Special stream handles. 0 and hipStreamLegacy name the device's null stream;
// hipStreamPerThread names the calling thread's default stream.
#define hipStreamLegacy ((hipStream_t)1)
#define hipStreamPerThread ((hipStream_t)2)

// Host work in a stream: runs on a runtime thread after the stream's earlier work;
// the stream's later work waits for it. It must not call HIP functions that wait
// for stream work.
typedef void (*hipStreamCallback_t)(hipStream_t stream, hipError_t status, void* userData);
typedef void (*hipHostFn_t)(void* userData);

extern "C" {

hipError_t hipStreamCreate(hipStream_t* stream);
hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int flags);
// Priorities: lower numbers are more urgent; see hipDeviceGetStreamPriorityRange
// (least 1, greatest -1). Values outside the range are clamped.
hipError_t hipStreamCreateWithPriority(hipStream_t* stream, unsigned int flags, int priority);
hipError_t hipDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
// The stream runs on a private queue limited to the compute units set in cuMask
// (cuMaskSize 32-bit words; bit i of word j is CU 32*j+i).
hipError_t hipExtStreamCreateWithCUMask(hipStream_t* stream, uint32_t cuMaskSize,
                                        const uint32_t* cuMask);
hipError_t hipExtStreamGetCUMask(hipStream_t stream, uint32_t cuMaskSize, uint32_t* outputCUMask);
// Work already enqueued still completes; the handle is invalid afterwards.
hipError_t hipStreamDestroy(hipStream_t stream);
hipError_t hipStreamSynchronize(hipStream_t stream);
// hipSuccess when all work is complete, hipErrorNotReady when not.
hipError_t hipStreamQuery(hipStream_t stream);
// Later work of `stream` waits (on the device) for the event's latest record.
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags);
hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* userData,
                                unsigned int flags);
hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* userData);
hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int* flags);
hipError_t hipStreamGetPriority(hipStream_t stream, int* priority);
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
// A number no other stream of the process has.
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long* streamId);
int hipGetStreamDeviceId(hipStream_t stream);

// Stream memory operations. A wait holds the stream's later work, on the device, until the
// value at ptr (device memory or pinned/registered host memory, naturally aligned) meets the
// condition: Gte (*ptr & mask) >= value, Eq (*ptr & mask) == value, And (*ptr & mask & value)
// != 0, Nor: some bit of mask is clear in both *ptr and value. A write stores value at ptr
// after the stream's earlier work and before its later work; its flags are ignored.
#define hipStreamWaitValueGte 0x0
#define hipStreamWaitValueEq 0x1
#define hipStreamWaitValueAnd 0x2
#define hipStreamWaitValueNor 0x3
hipError_t hipStreamWaitValue32(hipStream_t stream, void* ptr, uint32_t value, unsigned int flags,
                                uint32_t mask = 0xFFFFFFFF);
hipError_t hipStreamWaitValue64(hipStream_t stream, void* ptr, uint64_t value, unsigned int flags,
                                uint64_t mask = 0xFFFFFFFFFFFFFFFF);
hipError_t hipStreamWriteValue32(hipStream_t stream, void* ptr, uint32_t value, unsigned int flags);
hipError_t hipStreamWriteValue64(hipStream_t stream, void* ptr, uint64_t value, unsigned int flags);

// A batch of the operations above (ROCm 6.4), enqueued in order; every operation is checked
// before any is enqueued. A batch's waits compare the whole value (no mask). count is 1 to 256
// and flags 0. The flush and barrier operations are refused with hipErrorInvalidValue, as AMD's
// runtime refuses them.
typedef enum hipStreamBatchMemOpType {
    hipStreamMemOpWaitValue32 = 0x1,
    hipStreamMemOpWriteValue32 = 0x2,
    hipStreamMemOpWaitValue64 = 0x4,
    hipStreamMemOpWriteValue64 = 0x5,
    hipStreamMemOpBarrier = 0x6,
    hipStreamMemOpFlushRemoteWrites = 0x3
} hipStreamBatchMemOpType;
// 48 bytes; the wait and write forms: address at 8, value at 16, flags at 24.
typedef union hipStreamBatchMemOpParams_union {
    hipStreamBatchMemOpType operation;
    struct hipStreamMemOpWaitValueParams_t {
        hipStreamBatchMemOpType operation;
        hipDeviceptr_t address;
        union {
            uint32_t value;
            uint64_t value64;
        };
        unsigned int flags; // a hipStreamWaitValue condition
        hipDeviceptr_t alias; // unused
    } waitValue;
    struct hipStreamMemOpWriteValueParams_t {
        hipStreamBatchMemOpType operation;
        hipDeviceptr_t address;
        union {
            uint32_t value;
            uint64_t value64;
        };
        unsigned int flags; // ignored
        hipDeviceptr_t alias; // unused
    } writeValue;
    struct hipStreamMemOpFlushRemoteWritesParams_t {
        hipStreamBatchMemOpType operation;
        unsigned int flags;
    } flushRemoteWrites;
    struct hipStreamMemOpMemoryBarrierParams_t {
        hipStreamBatchMemOpType operation;
        unsigned int flags;
    } memoryBarrier;
    uint64_t pad[6];
} hipStreamBatchMemOpParams;
hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count,
                               hipStreamBatchMemOpParams* paramArray, unsigned int flags);

// Stream attributes (ROCm 7.1; hipStreamCopyAttributes 7.2): see hipStreamAttrID in launch.h.
hipError_t hipStreamSetAttribute(hipStream_t stream, hipStreamAttrID attr,
                                 const hipStreamAttrValue* value);
hipError_t hipStreamGetAttribute(hipStream_t stream, hipStreamAttrID attr,
                                 hipStreamAttrValue* value_out);
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);

// Per-thread-default-stream variants: a null stream means hipStreamPerThread.
hipError_t hipStreamSynchronize_spt(hipStream_t stream);
hipError_t hipStreamQuery_spt(hipStream_t stream);
hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags);
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback,
                                    void* userData, unsigned int flags);
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void* userData);
hipError_t hipStreamGetFlags_spt(hipStream_t stream, unsigned int* flags);
hipError_t hipStreamGetPriority_spt(hipStream_t stream, int* priority);
hipError_t hipLaunchKernel_spt(const void* function_address, dim3 numBlocks, dim3 dimBlocks,
                               void** args, size_t sharedMemBytes, hipStream_t stream);

// ---- stream-ordered memory ----
// Device and pinned host memory are copied asynchronously by the copy engines;
// copies involving pageable host memory return when complete (as CUDA allows).
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream);
hipError_t hipMemcpyHtoDAsync(void* dst, const void* src, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemcpyDtoHAsync(void* dst, const void* src, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemcpyDtoDAsync(void* dst, const void* src, size_t sizeBytes, hipStream_t stream);
// Like hipMemcpyAsync, then waits for the stream.
// Copies between two devices' memory (peer access need not be enabled).
hipError_t hipMemcpyPeer(void* dst, int dstDeviceId, const void* src, int srcDeviceId,
                         size_t sizeBytes);
hipError_t hipMemcpyPeerAsync(void* dst, int dstDeviceId, const void* src, int srcDevice,
                              size_t sizeBytes, hipStream_t stream = 0);
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind,
                               hipStream_t stream);
hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                            size_t height, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t stream);
hipError_t hipMemsetD8Async(void* dst, unsigned char value, size_t count, hipStream_t stream);
hipError_t hipMemsetD16Async(void* dst, unsigned short value, size_t count, hipStream_t stream);
hipError_t hipMemsetD32Async(void* dst, int value, size_t count, hipStream_t stream);

hipError_t hipMemcpyAsync_spt(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind,
                              hipStream_t stream);
hipError_t hipMemcpy2DAsync_spt(void* dst, size_t dpitch, const void* src, size_t spitch,
                                size_t width, size_t height, hipMemcpyKind kind,
                                hipStream_t stream);
hipError_t hipMemsetAsync_spt(void* dst, int value, size_t sizeBytes, hipStream_t stream);

} // extern "C"

#endif // HIPSHIM_API_STREAM_H
