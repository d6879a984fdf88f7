// batch_mem_op: hipStreamBatchMemOp runs its waits and writes in order on the stream, as the
// single hipStreamWaitValue/hipStreamWriteValue calls would: a write before a wait lands at
// once, a write after it only once the wait's condition holds, kernels before and after the
// batch stay in order; a batch with any bad operation is refused whole (nothing of it runs).
#include <hip/hip_runtime.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "../check.h"

// AMD's layout of the union (hip_runtime_api.h).
static_assert(sizeof(hipStreamBatchMemOpParams) == 48, "48-byte union");
static_assert(offsetof(hipStreamBatchMemOpParams, waitValue.address) == 8, "address at 8");
static_assert(offsetof(hipStreamBatchMemOpParams, waitValue.value64) == 16, "value at 16");
static_assert(offsetof(hipStreamBatchMemOpParams, writeValue.flags) == 24, "flags at 24");
static_assert(offsetof(hipStreamBatchMemOpParams, flushRemoteWrites.flags) == 4, "flush flags");

__global__ void store(unsigned* out, unsigned value) { *out = value; }
__global__ void add_one(const uint64_t* in, uint64_t* out) { *out = *in + 1; }

static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

template <typename T> static T host_load(const T* at) {
    return reinterpret_cast<const std::atomic<T>*>(at)->load(std::memory_order_acquire);
}
template <typename T> static void host_store(T* at, T value) {
    reinterpret_cast<std::atomic<T>*>(at)->store(value, std::memory_order_release);
}

static void sync_or_fail(hipStream_t s, const char* what) {
    auto start = std::chrono::steady_clock::now();
    hipError_t e;
    while ((e = hipStreamQuery(s)) == hipErrorNotReady) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
            std::fprintf(stderr, "FAIL %s: the stream is still waiting after 20 s\n", what);
            std::exit(1);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_OK(e);
}

static hipStreamBatchMemOpParams wait32(void* at, uint32_t value, unsigned flags) {
    hipStreamBatchMemOpParams p = {};
    p.waitValue.operation = hipStreamMemOpWaitValue32;
    p.waitValue.address = at;
    p.waitValue.value = value;
    p.waitValue.flags = flags;
    return p;
}
static hipStreamBatchMemOpParams wait64(void* at, uint64_t value, unsigned flags) {
    hipStreamBatchMemOpParams p = {};
    p.waitValue.operation = hipStreamMemOpWaitValue64;
    p.waitValue.address = at;
    p.waitValue.value64 = value;
    p.waitValue.flags = flags;
    return p;
}
static hipStreamBatchMemOpParams write32(void* at, uint32_t value) {
    hipStreamBatchMemOpParams p = {};
    p.writeValue.operation = hipStreamMemOpWriteValue32;
    p.writeValue.address = at;
    p.writeValue.value = value;
    return p;
}
static hipStreamBatchMemOpParams write64(void* at, uint64_t value) {
    hipStreamBatchMemOpParams p = {};
    p.writeValue.operation = hipStreamMemOpWriteValue64;
    p.writeValue.address = at;
    p.writeValue.value64 = value;
    return p;
}

// write, wait, write on pinned memory: the first write lands, the second waits for the host.
static void in_order(uint64_t* pinned) {
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    uint32_t* flag = reinterpret_cast<uint32_t*>(&pinned[0]);
    uint32_t* first = reinterpret_cast<uint32_t*>(&pinned[1]);
    uint64_t* second = &pinned[2];
    host_store(&pinned[0], uint64_t{0});
    host_store(first, 0u);
    host_store(second, uint64_t{0});
    hipStreamBatchMemOpParams ops[3] = {
        write32(first, 7),
        // The upper half of the flag's word must not matter to a 32-bit wait.
        wait32(flag, 5, hipStreamWaitValueEq),
        write64(second, 0x0123456789abcdefull),
    };
    EXPECT_OK(hipStreamBatchMemOp(s, 3, ops, 0));
    settle();
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    EXPECT_EQ(host_load(first), 7u);
    EXPECT_TRUE(host_load(second) == 0);
    host_store(&pinned[0], (uint64_t{0xffffffff} << 32) | 4); // still not 5
    settle();
    EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
    EXPECT_TRUE(host_load(second) == 0);
    host_store(flag, 5u);
    sync_or_fail(s, "the batch's wait");
    EXPECT_TRUE(host_load(second) == 0x0123456789abcdefull);
    CHECK(hipStreamDestroy(s));
}

// Device memory, kernels around the batch, a 64-bit GTE wait on what the batch wrote itself.
static void with_kernels() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    uint64_t *value, *out;
    unsigned* mark;
    CHECK(hipMalloc(&value, sizeof(uint64_t)));
    CHECK(hipMalloc(&out, sizeof(uint64_t)));
    CHECK(hipMalloc(&mark, sizeof(unsigned)));
    CHECK(hipMemset(value, 0, sizeof(uint64_t)));
    store<<<1, 1, 0, s>>>(mark, 1);
    hipStreamBatchMemOpParams ops[3] = {
        write64(value, 5ull << 40),
        wait64(value, 3ull << 40, hipStreamWaitValueGte),
        write32(mark, 2), // after the kernel before the batch
    };
    EXPECT_OK(hipStreamBatchMemOp(s, 3, ops, 0));
    add_one<<<1, 1, 0, s>>>(value, out);
    sync_or_fail(s, "a batch between kernels");
    uint64_t got = 0;
    unsigned got_mark = 0;
    CHECK(hipMemcpy(&got, out, sizeof(got), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&got_mark, mark, sizeof(got_mark), hipMemcpyDeviceToHost));
    EXPECT_TRUE(got == (5ull << 40) + 1);
    EXPECT_EQ(got_mark, 2u);
    CHECK(hipFree(value));
    CHECK(hipFree(out));
    CHECK(hipFree(mark));
    CHECK(hipStreamDestroy(s));
}

static void bad_input(uint64_t* pinned) {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    uint32_t* target = reinterpret_cast<uint32_t*>(&pinned[8]);
    host_store(target, 1u);
    hipStreamBatchMemOpParams good = write32(target, 99);
    hipStreamBatchMemOpParams many[257];
    for (auto& op : many) op = good;
    EXPECT_ERR(hipStreamBatchMemOp(s, 0, &good, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamBatchMemOp(s, 257, many, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamBatchMemOp(s, 1, &good, 1), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamBatchMemOp(s, 1, nullptr, 0), hipErrorInvalidValue);

    // Each bad operation after a good write: the whole batch is refused, the write never runs.
    hipStreamBatchMemOpParams bad[8] = {};
    bad[0].operation = hipStreamMemOpFlushRemoteWrites;
    bad[1].operation = hipStreamMemOpBarrier;
    bad[2].operation = static_cast<hipStreamBatchMemOpType>(9);
    bad[3] = wait32(target, 1, 4); // not a condition
    bad[4] = wait64(reinterpret_cast<char*>(target) + 4, 1, hipStreamWaitValueEq); // misaligned
    bad[5] = write32(reinterpret_cast<char*>(target) + 2, 1);                       // misaligned
    bad[6] = write64(nullptr, 1);
    uint64_t on_stack = 0;
    bad[7] = write64(&on_stack, 1); // memory no device reaches
    for (int i = 0; i < 8; i++) {
        hipStreamBatchMemOpParams pair[2] = {good, bad[i]};
        hipError_t e = hipStreamBatchMemOp(s, 2, pair, 0);
        if (e != hipErrorInvalidValue) {
            std::fprintf(stderr, "FAIL bad operation %d: got %s\n", i, err_name(e));
            ++failures;
        }
        (void)hipGetLastError();
    }
    EXPECT_OK(hipStreamSynchronize(s));
    EXPECT_EQ(host_load(target), 1u);
    EXPECT_TRUE(on_stack == 0);

    // 256 operations are allowed; the null stream works.
    EXPECT_OK(hipStreamBatchMemOp(nullptr, 256, many, 0));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_EQ(host_load(target), 99u);

    CHECK(hipStreamDestroy(s));
    EXPECT_ERR(hipStreamBatchMemOp(s, 1, &good, 0), hipErrorInvalidHandle);
}

int main() {
    uint64_t* pinned;
    CHECK(hipHostMalloc(&pinned, 4096, 0));
    in_order(pinned);
    with_kernels();
    bad_input(pinned);
    CHECK(hipHostFree(pinned));
    return finish("batch_mem_op");
}
