// stream_values: hipStreamWaitValue32/64 hold a stream's later work, on the device, until a
// value in memory meets each of the four conditions (under masks, 32 and 64 bits, at both
// halves of an 8-byte word, in pinned, registered and device memory), written by the host or
// by another stream's hipStreamWriteValue32/64; writes land after the stream's earlier work
// and before its later work; bad input is refused with hipErrorInvalidValue.
#include <hip/hip_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "../check.h"

__global__ void store(int* out, int value) { *out = value; }

// Reads *in (written by hipStreamWriteValue32 just before) and stores it plus one.
__global__ void add_one(const unsigned* in, unsigned* out) { *out = *in + 1; }

static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// hipStreamSynchronize that gives up after 20 s: a wait whose condition the runtime misreads
// would otherwise hang the program instead of failing it.
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

template <typename T, typename V> static void host_store(T* at, V value) {
    reinterpret_cast<std::atomic<T>*>(at)->store(static_cast<T>(value), std::memory_order_release);
}

template <typename T> static T host_load(const T* at) {
    return reinterpret_cast<const std::atomic<T>*>(at)->load(std::memory_order_acquire);
}

static hipError_t wait_value(hipStream_t s, void* p, uint64_t value, unsigned flags,
                             uint64_t mask, int bits) {
    return bits == 32 ? hipStreamWaitValue32(s, p, static_cast<uint32_t>(value), flags,
                                             static_cast<uint32_t>(mask))
                      : hipStreamWaitValue64(s, p, value, flags, mask);
}

// One condition: `blocked` leaves it unmet, `met` meets it.
struct Case {
    unsigned flags;
    uint64_t value, mask, blocked, met;
    int bits;
    const char* what;
};

static const uint64_t ALL = ~0ull;

static const Case CASES[] = {
    {hipStreamWaitValueGte, 5, ALL, 4, 5, 32, "gte 32"},
    {hipStreamWaitValueGte, 5, 0xff, 0x7704, 0x1106, 32, "gte 32 masked"},
    // Unsigned: 0x80000000 is above 0x7fffffff.
    {hipStreamWaitValueGte, 0x7fffffffull, ALL, 0x7ffffffeull, 0x80000000ull, 32, "gte 32 top"},
    {hipStreamWaitValueGte, 1ull << 40, ALL, (1ull << 40) - 1, 1ull << 41, 64, "gte 64"},
    {hipStreamWaitValueGte, 1ull << 63, ALL, (1ull << 63) - 1, ALL, 64, "gte 64 top"},
    {hipStreamWaitValueEq, 7, ALL, 8, 7, 32, "eq 32"},
    {hipStreamWaitValueEq, 7, 0x0f, 0x18, 0xa7, 32, "eq 32 masked"},
    {hipStreamWaitValueEq, 0x1234567800000000ull, 0xffffffff00000000ull, 0x1234567900000000ull,
     0x123456780000abcdull, 64, "eq 64 masked"},
    {hipStreamWaitValueAnd, 0x6, ALL, 0x9, 0x4, 32, "and 32"},
    {hipStreamWaitValueAnd, 0x6, 0x2, 0x4, 0x2, 32, "and 32 masked"},
    {hipStreamWaitValueAnd, 1ull << 50, ALL, ~(1ull << 50), 1ull << 50, 64, "and 64"},
    // Nor: some bit of the mask is clear in both the value and *ptr.
    {hipStreamWaitValueNor, 0xfffffff0u, ALL, 0x0f, 0x07, 32, "nor 32"},
    {hipStreamWaitValueNor, 0x1, 0x3, 0x2, 0x0, 32, "nor 32 masked"},
    {hipStreamWaitValueNor, ~0x10ull, ALL, 0x10, 0x0, 64, "nor 64"},
};

// Each case at a value whose address is 0 and 4 mod 8 (32-bit) or 0 mod 8 (64-bit): the
// stream waits, a write of its own stream's after the wait must not land, then the host meets
// the condition and the write lands.
static void conditions(uint64_t* words, unsigned* marker) {
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    for (const Case& c : CASES) {
        for (int offset = 0; offset < (c.bits == 32 ? 8 : 4); offset += 4) {
            char* at = reinterpret_cast<char*>(words) + offset;
            // The word's other half must not matter: fill it with ones.
            host_store(&words[0], ALL);
            if (c.bits == 32) {
                host_store(reinterpret_cast<uint32_t*>(at), static_cast<uint32_t>(c.blocked));
            } else {
                host_store(&words[0], c.blocked);
            }
            host_store(marker, 0u);
            EXPECT_OK(wait_value(s, at, c.value, c.flags, c.mask, c.bits));
            EXPECT_OK(hipStreamWriteValue32(s, marker, 1, 0));
            settle();
            EXPECT_ERR(hipStreamQuery(s), hipErrorNotReady);
            if (host_load(marker) != 0) {
                std::fprintf(stderr, "FAIL %s at offset %d: ran before its condition held\n",
                             c.what, offset);
                ++failures;
            }
            if (c.bits == 32) {
                host_store(reinterpret_cast<uint32_t*>(at), static_cast<uint32_t>(c.met));
            } else {
                host_store(&words[0], c.met);
            }
            sync_or_fail(s, c.what);
            if (host_load(marker) != 1) {
                std::fprintf(stderr, "FAIL %s at offset %d: the write after the wait is missing\n",
                             c.what, offset);
                ++failures;
            }
        }
    }
    CHECK(hipStreamDestroy(s));
}

// Stream `waiter` waits on device memory that stream `writer` writes with
// hipStreamWriteValue64 once the host lets it (`writer` waits on a pinned flag itself).
static void across_streams(unsigned* flag) {
    hipStream_t waiter, writer;
    CHECK(hipStreamCreateWithFlags(&waiter, hipStreamNonBlocking));
    CHECK(hipStreamCreateWithFlags(&writer, hipStreamNonBlocking));
    uint64_t* value;
    int* out;
    CHECK(hipMalloc(&value, sizeof(uint64_t)));
    CHECK(hipMalloc(&out, sizeof(int)));
    CHECK(hipMemset(value, 0, sizeof(uint64_t)));
    CHECK(hipMemset(out, 0, sizeof(int)));
    host_store(flag, 0u);

    EXPECT_OK(hipStreamWaitValue64(waiter, value, 3ull << 33, hipStreamWaitValueGte));
    store<<<1, 1, 0, waiter>>>(out, 42);
    EXPECT_OK(hipStreamWaitValue32(writer, flag, 1, hipStreamWaitValueEq));
    EXPECT_OK(hipStreamWriteValue64(writer, value, 1ull << 32, 0)); // not enough
    EXPECT_OK(hipStreamWriteValue64(writer, value, 7ull << 33, 0)); // enough
    settle();
    EXPECT_ERR(hipStreamQuery(waiter), hipErrorNotReady);
    EXPECT_ERR(hipStreamQuery(writer), hipErrorNotReady);
    host_store(flag, 1u);
    sync_or_fail(waiter, "a wait on another stream's write");
    int got = 0;
    uint64_t final_value = 0;
    CHECK(hipMemcpy(&got, out, sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&final_value, value, sizeof(uint64_t), hipMemcpyDeviceToHost));
    EXPECT_EQ(got, 42);
    EXPECT_TRUE(final_value == 7ull << 33);

    // An event recorded after the wait covers it: a third stream waiting for it waits too.
    hipStream_t third;
    hipEvent_t e;
    CHECK(hipStreamCreateWithFlags(&third, hipStreamNonBlocking));
    CHECK(hipEventCreate(&e));
    host_store(flag, 0u);
    EXPECT_OK(hipStreamWaitValue32(waiter, flag, 2, hipStreamWaitValueGte));
    CHECK(hipEventRecord(e, waiter));
    CHECK(hipStreamWaitEvent(third, e, 0));
    store<<<1, 1, 0, third>>>(out, 43);
    settle();
    EXPECT_ERR(hipStreamQuery(third), hipErrorNotReady);
    EXPECT_ERR(hipEventQuery(e), hipErrorNotReady);
    host_store(flag, 2u);
    sync_or_fail(third, "a wait through an event");
    CHECK(hipMemcpy(&got, out, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT_EQ(got, 43);

    CHECK(hipEventDestroy(e));
    CHECK(hipStreamDestroy(third));
    CHECK(hipFree(value));
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(waiter));
    CHECK(hipStreamDestroy(writer));
}

// Writes land after the stream's earlier work and before its later work, in device memory
// and in registered host memory.
static void write_order() {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    unsigned *in, *out;
    CHECK(hipMalloc(&in, sizeof(unsigned)));
    CHECK(hipMalloc(&out, sizeof(unsigned)));
    for (unsigned i = 0; i < 20; i++) {
        EXPECT_OK(hipStreamWriteValue32(s, in, 100 * i, 0));
        add_one<<<1, 1, 0, s>>>(in, out);
        EXPECT_OK(hipStreamWriteValue32(s, in, 5, 0));
    }
    unsigned got[2] = {0, 0};
    CHECK(hipMemcpyAsync(&got[0], out, sizeof(unsigned), hipMemcpyDeviceToHost, s));
    CHECK(hipMemcpyAsync(&got[1], in, sizeof(unsigned), hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT_EQ(got[0], 1901u);
    EXPECT_EQ(got[1], 5u);

    // Registered host memory: the device reaches it at another address; the write and the
    // wait still name the host pointer.
    static uint64_t registered[512] __attribute__((aligned(4096)));
    CHECK(hipHostRegister(registered, sizeof(registered), hipHostRegisterDefault));
    int* flag_out;
    CHECK(hipMalloc(&flag_out, sizeof(int)));
    store<<<1, 1, 0, s>>>(flag_out, 0);
    EXPECT_OK(hipStreamWriteValue64(s, &registered[3], 0x0123456789abcdefull, 0));
    EXPECT_OK(hipStreamWaitValue64(s, &registered[3], 0x0123456789abcdefull,
                                   hipStreamWaitValueEq));
    store<<<1, 1, 0, s>>>(flag_out, 9);
    CHECK(hipStreamSynchronize(s));
    int got_flag = 0;
    CHECK(hipMemcpy(&got_flag, flag_out, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT_EQ(got_flag, 9);
    EXPECT_TRUE(host_load(&registered[3]) == 0x0123456789abcdefull);
    CHECK(hipHostUnregister(registered));

    CHECK(hipFree(flag_out));
    CHECK(hipFree(in));
    CHECK(hipFree(out));
    CHECK(hipStreamDestroy(s));
}

static void bad_input(uint64_t* pinned) {
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    char* p = reinterpret_cast<char*>(pinned);
    EXPECT_ERR(hipStreamWaitValue32(s, nullptr, 1, hipStreamWaitValueEq), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWaitValue64(s, nullptr, 1, hipStreamWaitValueEq), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWriteValue32(s, nullptr, 1, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWriteValue64(s, nullptr, 1, 0), hipErrorInvalidValue);
    // Misaligned.
    EXPECT_ERR(hipStreamWaitValue32(s, p + 2, 1, hipStreamWaitValueEq), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWaitValue64(s, p + 4, 1, hipStreamWaitValueEq), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWriteValue32(s, p + 1, 1, 0), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWriteValue64(s, p + 4, 1, 0), hipErrorInvalidValue);
    // Not a condition.
    EXPECT_ERR(hipStreamWaitValue32(s, p, 1, 4), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWaitValue64(s, p, 1, 0xffffffffu), hipErrorInvalidValue);
    // Memory no device reaches.
    uint64_t on_stack = 0;
    EXPECT_ERR(hipStreamWaitValue64(s, &on_stack, 1, hipStreamWaitValueEq), hipErrorInvalidValue);
    EXPECT_ERR(hipStreamWriteValue64(s, &on_stack, 1, 0), hipErrorInvalidValue);
    EXPECT_TRUE(on_stack == 0);
    // Nothing was enqueued by the refusals.
    EXPECT_OK(hipStreamSynchronize(s));
    // A destroyed stream.
    CHECK(hipStreamDestroy(s));
    EXPECT_ERR(hipStreamWaitValue32(s, p, 1, hipStreamWaitValueEq), hipErrorInvalidHandle);
    EXPECT_ERR(hipStreamWriteValue32(s, p, 1, 0), hipErrorInvalidHandle);
    // The null stream works.
    host_store(&pinned[0], 0ull);
    EXPECT_OK(hipStreamWriteValue64(nullptr, pinned, 11, 0));
    EXPECT_OK(hipStreamWaitValue64(nullptr, pinned, 11, hipStreamWaitValueEq));
    EXPECT_OK(hipDeviceSynchronize());
    EXPECT_TRUE(host_load(&pinned[0]) == 11);
}

int main() {
    int can = 0;
    CHECK(hipDeviceGetAttribute(&can, hipDeviceAttributeCanUseStreamWaitValue, 0));
    EXPECT_EQ(can, 1);
    uint64_t* words;
    unsigned* flags;
    CHECK(hipHostMalloc(&words, 4096, 0));
    CHECK(hipHostMalloc(&flags, 4096, 0));
    conditions(words, flags);
    across_streams(flags + 16);
    write_order();
    bad_input(words);
    CHECK(hipHostFree(words));
    CHECK(hipHostFree(flags));
    return finish("stream_values");
}
