// contexts: the primary context and hipCtx* calls as AMD's runtime has them (one context per
// device, naming it), the cache and shared-memory configurations, hipSetValidDevices,
// hipStreamGetId, and hipPointerGetAttribute / hipDrvPointerGetAttributes /
// hipPointerSetAttribute (AMD's value widths; unknown memory gets defaults). The memory type
// follows the ROCm ABI (abi.h).
#include "../check.h"
#include "abi.h"

#include <cstring>
#include <vector>

int main() {
    const int abi = expected_abi();
    std::printf("contexts: expecting ROCm %d behaviour\n", abi);
    CHECK(hipSetDevice(0));

    // Primary context.
    hipCtx_t primary = nullptr, again = nullptr;
    EXPECT_OK(hipDevicePrimaryCtxRetain(&primary, 0));
    EXPECT_TRUE(primary != nullptr);
    EXPECT_OK(hipDevicePrimaryCtxRetain(&again, 0));
    EXPECT_TRUE(again == primary);
    unsigned flags = 99;
    int active = -1;
    EXPECT_OK(hipDevicePrimaryCtxGetState(0, &flags, &active));
    EXPECT_EQ(active, 1);
    EXPECT_ERR(hipDevicePrimaryCtxSetFlags(0, hipDeviceScheduleYield), hipErrorContextAlreadyInUse);
    EXPECT_OK(hipDevicePrimaryCtxRelease(0));
    EXPECT_OK(hipDevicePrimaryCtxRelease(0));
    EXPECT_OK(hipDevicePrimaryCtxGetState(0, &flags, &active));
    EXPECT_EQ(active, 0);
    EXPECT_OK(hipDevicePrimaryCtxSetFlags(0, hipDeviceScheduleYield));
    EXPECT_OK(hipDevicePrimaryCtxGetState(0, &flags, nullptr));
    EXPECT_EQ(flags, (unsigned)hipDeviceScheduleYield);
    EXPECT_OK(hipDevicePrimaryCtxReset(0));
    EXPECT_ERR(hipDevicePrimaryCtxRetain(&again, 99), hipErrorInvalidDevice);
    EXPECT_ERR(hipDevicePrimaryCtxRetain(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipDevicePrimaryCtxGetState(-1, &flags, &active), hipErrorInvalidDevice);

    // hipCtx*: the context is the device's primary one.
    hipCtx_t ctx = nullptr, current = nullptr, popped = nullptr;
    EXPECT_OK(hipCtxCreate(&ctx, 0, 0));
    EXPECT_TRUE(ctx == primary);
    EXPECT_OK(hipCtxGetCurrent(&current));
    EXPECT_TRUE(current == ctx);
    int device = -1;
    EXPECT_OK(hipCtxGetDevice(&device));
    EXPECT_EQ(device, 0);
    EXPECT_OK(hipCtxPushCurrent(ctx));
    EXPECT_OK(hipCtxPopCurrent(&popped));
    EXPECT_TRUE(popped == ctx);
    EXPECT_OK(hipCtxPopCurrent(nullptr)); // the one hipCtxCreate pushed
    EXPECT_ERR(hipCtxPopCurrent(&popped), hipErrorInvalidContext);
    EXPECT_OK(hipCtxSetCurrent(ctx));
    EXPECT_OK(hipCtxSetCurrent(nullptr));
    EXPECT_ERR(hipCtxPushCurrent(nullptr), hipErrorInvalidContext);
    EXPECT_ERR(hipCtxPushCurrent(reinterpret_cast<hipCtx_t>(&device)), hipErrorInvalidContext);
    unsigned version = 0;
    EXPECT_OK(hipCtxGetApiVersion(ctx, &version));
    EXPECT_EQ(version, 3020u);
    EXPECT_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
    EXPECT_OK(hipCtxGetFlags(&flags));
    EXPECT_EQ(flags, (unsigned)hipDeviceScheduleSpin);
    EXPECT_OK(hipCtxSynchronize());
    EXPECT_OK(hipCtxDestroy(ctx));
    EXPECT_ERR(hipCtxDestroy(nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipCtxCreate(&ctx, 0, 99), hipErrorInvalidValue);

    // Configurations.
    hipFuncCache_t cache = hipFuncCachePreferL1;
    EXPECT_OK(hipDeviceSetCacheConfig(hipFuncCachePreferShared));
    EXPECT_OK(hipDeviceGetCacheConfig(&cache));
    EXPECT_EQ((int)cache, (int)hipFuncCachePreferNone);
    EXPECT_ERR(hipDeviceSetCacheConfig((hipFuncCache_t)7), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetCacheConfig(nullptr), hipErrorInvalidValue);
    EXPECT_OK(hipCtxSetCacheConfig(hipFuncCachePreferEqual));
    EXPECT_OK(hipCtxGetCacheConfig(&cache));
    EXPECT_EQ((int)cache, (int)hipFuncCachePreferNone);
    hipSharedMemConfig banks = hipSharedMemBankSizeDefault;
    EXPECT_OK(hipDeviceSetSharedMemConfig(hipSharedMemBankSizeEightByte));
    EXPECT_OK(hipDeviceGetSharedMemConfig(&banks));
    EXPECT_EQ((int)banks, (int)hipSharedMemBankSizeFourByte);
    EXPECT_ERR(hipDeviceSetSharedMemConfig((hipSharedMemConfig)3), hipErrorInvalidValue);
    EXPECT_OK(hipCtxGetSharedMemConfig(&banks));
    EXPECT_OK(hipCtxSetSharedMemConfig(hipSharedMemBankSizeFourByte));

    int valid[] = {0};
    int twice[] = {0, 0};
    int missing[] = {5};
    EXPECT_OK(hipSetValidDevices(valid, 1));
    EXPECT_ERR(hipSetValidDevices(twice, 2), hipErrorInvalidValue);
    EXPECT_ERR(hipSetValidDevices(missing, 1), hipErrorInvalidDevice);
    EXPECT_ERR(hipSetValidDevices(valid, 0), hipErrorInvalidValue);

    // Stream ids: distinct, stable.
    hipStream_t a, b;
    CHECK(hipStreamCreate(&a));
    CHECK(hipStreamCreate(&b));
    unsigned long long ida = 0, idb = 0, idn = 0, ida2 = 0;
    EXPECT_OK(hipStreamGetId(a, &ida));
    EXPECT_OK(hipStreamGetId(b, &idb));
    EXPECT_OK(hipStreamGetId(nullptr, &idn));
    EXPECT_OK(hipStreamGetId(a, &ida2));
    EXPECT_TRUE(ida != idb && ida != idn && idb != idn && ida == ida2);
    CHECK(hipStreamDestroy(a));
    CHECK(hipStreamDestroy(b));

    // Pointer attributes.
    char* dev = nullptr;
    char* pinned = nullptr;
    CHECK(hipMalloc((void**)&dev, 4096));
    CHECK(hipHostMalloc((void**)&pinned, 256, 0));
    const unsigned host_type = abi == 5 ? 0 : 1, device_type = abi == 5 ? 1 : 2;
    unsigned type = 99;
    EXPECT_OK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + 100));
    EXPECT_EQ(type, device_type);
    EXPECT_OK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned));
    EXPECT_EQ(type, host_type);
    void* p = nullptr;
    EXPECT_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, dev + 100));
    EXPECT_TRUE(p == dev);
    EXPECT_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, dev + 100));
    EXPECT_TRUE(p == dev + 100);
    EXPECT_OK(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, pinned + 8));
    EXPECT_TRUE(p == pinned + 8);
    EXPECT_ERR(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_HOST_POINTER, dev), hipErrorInvalidValue);
    unsigned size = 0;
    EXPECT_OK(hipPointerGetAttribute(&size, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, dev + 1));
    EXPECT_EQ(size, 4096u);
    int ordinal = 99;
    EXPECT_OK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dev));
    EXPECT_EQ(ordinal, 0);
    int flag = 0; // AMD writes one byte (a bool)
    EXPECT_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_MAPPED, dev));
    EXPECT_EQ(flag, 1);
    flag = 0;
    EXPECT_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_IS_MANAGED, dev));
    EXPECT_EQ(flag, 0);
    // AMD's runtime does not answer the owning context (as hip-tests check).
    hipCtx_t owner = nullptr;
    EXPECT_ERR(hipPointerGetAttribute(&owner, HIP_POINTER_ATTRIBUTE_CONTEXT, dev), hipErrorNotSupported);
    unsigned id1 = 0, id2 = 0, id3 = 0;
    EXPECT_OK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, dev));
    EXPECT_OK(hipPointerGetAttribute(&id2, HIP_POINTER_ATTRIBUTE_BUFFER_ID, pinned));
    EXPECT_TRUE(id1 != id2);
    // Unique over time: memory allocated again at a freed allocation's address gets another.
    {
        void* again = nullptr;
        CHECK(hipMalloc(&again, 4096));
        CHECK(hipPointerGetAttribute(&id1, HIP_POINTER_ATTRIBUTE_BUFFER_ID, again));
        CHECK(hipFree(again));
        CHECK(hipMalloc(&again, 4096));
        CHECK(hipPointerGetAttribute(&id3, HIP_POINTER_ATTRIBUTE_BUFFER_ID, again));
        EXPECT_TRUE(id1 != id3);
        CHECK(hipFree(again));
    }
    EXPECT_ERR(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_P2P_TOKENS, dev), hipErrorNotSupported);
    EXPECT_ERR(hipPointerGetAttribute(&p, (hipPointer_attribute)99, dev), hipErrorInvalidValue);
    EXPECT_ERR(hipPointerGetAttribute(nullptr, HIP_POINTER_ATTRIBUTE_MAPPED, dev), hipErrorInvalidValue);
    EXPECT_ERR(hipPointerGetAttribute(&p, HIP_POINTER_ATTRIBUTE_MAPPED, nullptr), hipErrorInvalidValue);
    std::vector<char> mine(64);
    ordinal = 99;
    EXPECT_ERR(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, mine.data()),
               hipErrorInvalidValue);
    EXPECT_EQ(ordinal, -2);

    // Several at once: unknown memory gets the defaults, and the call succeeds.
    hipPointer_attribute which[3] = {HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR};
    unsigned t = 99;
    int o = 99;
    void* start = nullptr;
    void* outs[3] = {&t, &o, &start};
    EXPECT_OK(hipDrvPointerGetAttributes(3, which, outs, dev + 10));
    EXPECT_EQ(t, device_type);
    EXPECT_EQ(o, 0);
    EXPECT_TRUE(start == dev);
    EXPECT_OK(hipDrvPointerGetAttributes(3, which, outs, mine.data()));
    EXPECT_EQ(t, 0u);
    EXPECT_EQ(o, -2);
    EXPECT_TRUE(start == nullptr);
    EXPECT_ERR(hipDrvPointerGetAttributes(0, which, outs, dev), hipErrorInvalidValue);

    int on = 1;
    EXPECT_OK(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dev));
    flag = 0;
    EXPECT_OK(hipPointerGetAttribute(&flag, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, dev));
    EXPECT_EQ(flag, 1);
    EXPECT_ERR(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_MAPPED, dev), hipErrorInvalidValue);
    EXPECT_ERR(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, mine.data()),
               hipErrorInvalidDevicePointer);

    CHECK(hipFree(dev));
    CHECK(hipHostFree(pinned));
    return finish("contexts");
}
