// Memory pools: attributes and their defaults, used/reserved amounts and high-water marks,
// the release threshold at synchronisation and hipMemPoolTrimTo, explicit pools (create,
// current, allocate from, destroy), access, pointer attributes of pool memory, hipFree of it,
// and bad input.
#include "mempool.h"

static const size_t KB64 = 64 * 1024;

int main() {
    hipMemPool_t def, cur;
    CHECK(hipDeviceGetDefaultMemPool(&def, 0));
    CHECK(hipDeviceGetMemPool(&cur, 0));
    EXPECT_TRUE(def == cur);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    // Defaults (CUDA's): every reuse policy on, release threshold 0, nothing reserved.
    EXPECT_EQ(attr_int(def, hipMemPoolReuseFollowEventDependencies), 1);
    EXPECT_EQ(attr_int(def, hipMemPoolReuseAllowOpportunistic), 1);
    EXPECT_EQ(attr_int(def, hipMemPoolReuseAllowInternalDependencies), 1);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReleaseThreshold), 0);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), 0);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), 0);

    // Used and reserved follow allocations and frees; the high-water marks stay up.
    void *p1, *p2;
    CHECK(hipMallocAsync(&p1, KB64, s));
    CHECK(hipMallocAsync(&p2, 2 * KB64, s));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), 3 * KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), 3 * KB64);
    CHECK(hipFreeAsync(p2, s));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), 3 * KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemHigh), 3 * KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemHigh), 3 * KB64);
    // Release threshold 0: the synchronisation gives back everything not in use.
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemHigh), 3 * KB64);
    // High-water marks reset to 0 only, and then read the current amount.
    uint64_t zero = 0, seven = 7;
    EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemHigh, &seven), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemCurrent, &zero), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolSetAttribute(def, hipMemPoolAttrReservedMemCurrent, &zero), hipErrorInvalidValue);
    CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrUsedMemHigh, &zero));
    CHECK(hipMemPoolSetAttribute(def, hipMemPoolAttrReservedMemHigh, &zero));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemHigh), KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemHigh), KB64);

    // A threshold keeps memory across synchronisations; hipMemPoolTrimTo gives it back.
    set_u64(def, hipMemPoolAttrReleaseThreshold, 4 * KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReleaseThreshold), 4 * KB64);
    void *p3, *p4;
    CHECK(hipMallocAsync(&p3, 2 * KB64, s));
    CHECK(hipMallocAsync(&p4, 2 * KB64, s));
    CHECK(hipFreeAsync(p3, s));
    CHECK(hipFreeAsync(p4, s));
    CHECK(hipStreamSynchronize(s));
    // 5 x 64 KiB reserved, threshold 4: one 128 KiB block goes.
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), 3 * KB64);
    CHECK(hipMemPoolTrimTo(def, 2 * KB64));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), KB64);
    CHECK(hipMemPoolTrimTo(def, 0));
    // Memory in use is never trimmed.
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), KB64);

    // Pool memory is device memory of the pool's device, usable by copies and kernels.
    hipPointerAttribute_t pa;
    CHECK(hipPointerGetAttributes(&pa, p1));
    EXPECT_EQ(pa.type, hipMemoryTypeDevice);
    EXPECT_EQ(pa.device, 0);
    fill<<<1, 64, 0, s>>>((int*)p1, 3, 64);
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds((int*)p1, 3, 64));
    // hipFree of pool memory: allowed, after the device's work (CUDA's rule); a
    // synchronisation, so the block goes back to the device (threshold 0).
    set_u64(def, hipMemPoolAttrReleaseThreshold, 0);
    CHECK(hipFree(p1));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), 0);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrReservedMemCurrent), 0);

    // Explicit pools.
    hipMemPoolProps props = {};
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    hipMemPool_t mine;
    CHECK(hipMemPoolCreate(&mine, &props));
    EXPECT_TRUE(mine != def);
    void* f;
    CHECK(hipMallocFromPoolAsync(&f, KB64, mine, s));
    EXPECT_EQ(attr_u64(mine, hipMemPoolAttrUsedMemCurrent), KB64);
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), 0);
    // Made current, it serves hipMallocAsync.
    CHECK(hipDeviceSetMemPool(0, mine));
    CHECK(hipDeviceGetMemPool(&cur, 0));
    EXPECT_TRUE(cur == mine);
    void* g;
    CHECK(hipMallocAsync(&g, KB64, s));
    EXPECT_EQ(attr_u64(mine, hipMemPoolAttrUsedMemCurrent), 2 * KB64);
    CHECK(hipFreeAsync(f, s));
    CHECK(hipFreeAsync(g, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr_u64(mine, hipMemPoolAttrReservedMemCurrent), 0);
    // Destroying the current pool makes the default current again.
    CHECK(hipMemPoolDestroy(mine));
    CHECK(hipDeviceGetMemPool(&cur, 0));
    EXPECT_TRUE(cur == def);
    EXPECT_ERR(hipMemPoolGetAttribute(mine, hipMemPoolAttrUsedMemCurrent, &zero), hipErrorInvalidHandle);
    EXPECT_ERR(hipMallocFromPoolAsync(&f, 16, mine, s), hipErrorInvalidHandle);
    EXPECT_ERR(hipMemPoolDestroy(mine), hipErrorInvalidHandle);
    EXPECT_ERR(hipMemPoolDestroy(def), hipErrorInvalidValue);
    // A pool destroyed with memory still handed out: the memory stays usable until freed.
    CHECK(hipMemPoolCreate(&mine, &props));
    CHECK(hipMallocFromPoolAsync(&f, KB64, mine, s));
    CHECK(hipMemPoolDestroy(mine));
    fill<<<1, 64, 0, s>>>((int*)f, 9, 64);
    CHECK(hipStreamSynchronize(s));
    EXPECT_TRUE(holds((int*)f, 9, 64));
    CHECK(hipFreeAsync(f, s));
    CHECK(hipStreamSynchronize(s));

    // Access: the owner reads and writes.
    hipMemLocation loc = {hipMemLocationTypeDevice, 0};
    hipMemAccessFlags acc = hipMemAccessFlagsProtNone;
    CHECK(hipMemPoolGetAccess(&acc, def, &loc));
    EXPECT_EQ(acc, hipMemAccessFlagsProtReadWrite);
    hipMemAccessDesc desc = {{hipMemLocationTypeDevice, 0}, hipMemAccessFlagsProtReadWrite};
    CHECK(hipMemPoolSetAccess(def, &desc, 1));
    desc.flags = hipMemAccessFlagsProtNone;
    EXPECT_ERR(hipMemPoolSetAccess(def, &desc, 1), hipErrorInvalidValue);
    desc.location.id = 99;
    desc.flags = hipMemAccessFlagsProtRead;
    EXPECT_ERR(hipMemPoolSetAccess(def, &desc, 1), hipErrorInvalidValue);
    loc.id = 99;
    EXPECT_ERR(hipMemPoolGetAccess(&acc, def, &loc), hipErrorInvalidValue);
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    if (count > 1) {
        // Another device: none until granted, then what was granted.
        hipMemLocation other = {hipMemLocationTypeDevice, 1};
        CHECK(hipMemPoolGetAccess(&acc, def, &other));
        EXPECT_EQ(acc, hipMemAccessFlagsProtNone);
        hipMemAccessDesc grant = {other, hipMemAccessFlagsProtRead};
        CHECK(hipMemPoolSetAccess(def, &grant, 1));
        CHECK(hipMemPoolGetAccess(&acc, def, &other));
        EXPECT_EQ(acc, hipMemAccessFlagsProtRead);
        // A pool of device 1 cannot be device 0's current pool.
        props.location.id = 1;
        CHECK(hipMemPoolCreate(&mine, &props));
        EXPECT_ERR(hipDeviceSetMemPool(0, mine), hipErrorInvalidValue);
        CHECK(hipDeviceSetMemPool(1, mine));
        CHECK(hipMemPoolDestroy(mine));
        props.location.id = 0;
    }

    // Bad input.
    void* h;
    EXPECT_ERR(hipMallocAsync(nullptr, 16, s), hipErrorInvalidValue);
    CHECK(hipMallocAsync(&h, 16, s));
    CHECK(hipFreeAsync(h, s));
    EXPECT_ERR(hipFreeAsync(h, s), hipErrorInvalidValue); // twice
    int local;
    EXPECT_ERR(hipFreeAsync(&local, s), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolGetAttribute(def, (hipMemPoolAttr)99, &zero), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolGetAttribute(def, hipMemPoolAttrUsedMemCurrent, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipMemPoolCreate(&mine, nullptr), hipErrorInvalidValue);
    props.allocType = hipMemAllocationTypeInvalid;
    EXPECT_ERR(hipMemPoolCreate(&mine, &props), hipErrorInvalidValue);
    props.allocType = hipMemAllocationTypePinned;
    props.location.id = 99;
    EXPECT_ERR(hipMemPoolCreate(&mine, &props), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetDefaultMemPool(&cur, 99), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetMemPool(&cur, -1), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocAsync(&h, 0, s), hipErrorInvalidValue);
    EXPECT_ERR(hipFreeAsync(nullptr, s), hipErrorInvalidValue);
    EXPECT_ERR(hipDeviceGetMemPool(nullptr, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipMallocFromPoolAsync(&h, 16, nullptr, s), hipErrorInvalidHandle);
    // hipFreeAsync also takes hipMalloc memory (freed after the device's work).
    CHECK(hipMalloc(&h, 16));
    EXPECT_ERR(hipFreeAsync(h, s), hipSuccess);
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(attr_u64(def, hipMemPoolAttrUsedMemCurrent), 0);

    CHECK(hipStreamDestroy(s));
    return finish("mempool pools");
}
