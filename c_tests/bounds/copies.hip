// bounds/copies: every copy and fill entry point, synchronous and stream-ordered, with
// hipMemcpyDefault and the explicit kinds, refuses a range that starts inside an allocation
// (device, pinned host, registered host, managed, device variable) and leaves it: 1 byte too
// long, or huge (2^63, SIZE_MAX, a length whose end wraps around). Each is
// hipErrorInvalidValue and the neighbouring allocations (and the target itself) keep their
// bytes. Exact fits still succeed. A pageable host-to-host copy of 2^63 bytes fails cleanly.
// The copies are host API paths only, so one target is enough.
// hipshim-test: targets=gfx942 expect-stderr=overrun=1 expect-stderr=unmapped=
#include "../check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

static const size_t N = 4096;
static const size_t HUGE_LENGTHS[] = {(size_t)1 << 63, SIZE_MAX, SIZE_MAX - 4095};
static const hipError_t BAD = hipErrorInvalidValue;

__device__ int sym[64];

// Device allocations of N bytes each, filled with (index + 1); the bad calls aim at the
// middle ones so whichever way the simulated allocations are laid out, a neighbour is hit.
static const int NDEV = 5;
static unsigned char* dev[NDEV];
static unsigned char* pinned;
static unsigned char* managed;
static std::vector<unsigned char> registered_storage(2 * N, 0x77);
static unsigned char* registered;

static void fill_all() {
    for (int i = 0; i < NDEV; ++i) EXPECT_OK(hipMemset(dev[i], i + 1, N));
    std::memset(pinned, 0x61, N);
    std::memset(managed, 0x62, N);
    std::memset(registered, 0x63, N);
    std::vector<int> s(64, 0x64646464);
    EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(sym), s.data(), sizeof(int) * 64));
}

// Every allocation still holds what fill_all put there.
static void check_untouched(const char* what) {
    EXPECT_OK(hipDeviceSynchronize());
    std::vector<unsigned char> back(N);
    int before = failures;
    for (int i = 0; i < NDEV; ++i) {
        EXPECT_OK(hipMemcpy(back.data(), dev[i], N, hipMemcpyDeviceToHost));
        for (size_t k = 0; k < N; ++k) {
            if (back[k] != i + 1) {
                std::fprintf(stderr, "FAIL %s: dev[%d][%zu] = %d, want %d\n", what, i, k,
                             back[k], i + 1);
                ++failures;
                break;
            }
        }
    }
    for (size_t k = 0; k < N; ++k) {
        if (pinned[k] != 0x61 || managed[k] != 0x62 || registered[k] != 0x63) {
            std::fprintf(stderr, "FAIL %s: host allocation byte %zu changed\n", what, k);
            ++failures;
            break;
        }
    }
    EXPECT_EQ(registered_storage[N], 0x77);
    std::vector<int> s(64);
    EXPECT_OK(hipMemcpyFromSymbol(s.data(), HIP_SYMBOL(sym), sizeof(int) * 64));
    for (int k = 0; k < 64; ++k) EXPECT_EQ(s[k], 0x64646464);
    if (failures != before) std::fprintf(stderr, "  (after %s)\n", what);
}

int main() {
    for (int i = 0; i < NDEV; ++i) EXPECT_OK(hipMalloc(&dev[i], N));
    EXPECT_OK(hipHostMalloc(&pinned, N, 0));
    EXPECT_OK(hipMallocManaged(&managed, N, hipMemAttachGlobal));
    registered = registered_storage.data();
    EXPECT_OK(hipHostRegister(registered, N, hipHostRegisterDefault));
    hipStream_t stream;
    EXPECT_OK(hipStreamCreate(&stream));
    // Pageable host memory big enough that the host side of every bad copy is valid.
    std::vector<unsigned char> host(4 * N, 0x5a), host2(4 * N, 0);
    unsigned char* d = dev[2];
    unsigned char* e = dev[1];
    fill_all();

    // --- synchronous copies, 1 byte too long, each kind -------------------------------
    const hipMemcpyKind to_dev[] = {hipMemcpyHostToDevice, hipMemcpyDefault};
    const hipMemcpyKind from_dev[] = {hipMemcpyDeviceToHost, hipMemcpyDefault};
    const hipMemcpyKind dev_dev[] = {hipMemcpyDeviceToDevice, hipMemcpyDefault};
    for (hipMemcpyKind k : to_dev) {
        EXPECT_ERR(hipMemcpy(d, host.data(), N + 1, k), BAD);
        EXPECT_ERR(hipMemcpy(d + 1, host.data(), N, k), BAD);
        EXPECT_ERR(hipMemcpy(d + N - 1, host.data(), 2, k), BAD);
    }
    for (hipMemcpyKind k : from_dev) {
        EXPECT_ERR(hipMemcpy(host2.data(), d, N + 1, k), BAD);
        EXPECT_ERR(hipMemcpy(host2.data(), d + 1, N, k), BAD);
    }
    for (hipMemcpyKind k : dev_dev) {
        EXPECT_ERR(hipMemcpy(d, e, N + 1, k), BAD);
        EXPECT_ERR(hipMemcpy(d + 1, e, N, k), BAD);
        EXPECT_ERR(hipMemcpy(d, e + 1, N, k), BAD);
    }
    // The registry wins over a kind that names the wrong side (as on AMD).
    EXPECT_ERR(hipMemcpy(d, host.data(), N + 1, hipMemcpyHostToHost), BAD);
    EXPECT_ERR(hipMemcpyHtoD(d, host.data(), N + 1), BAD);
    EXPECT_ERR(hipMemcpyDtoH(host2.data(), d + 1, N), BAD);
    EXPECT_ERR(hipMemcpyDtoD(d, e + 1, N), BAD);
    check_untouched("synchronous 1-byte overruns");

    // --- synchronous copies, huge lengths -----------------------------------------------
    for (size_t len : HUGE_LENGTHS) {
        EXPECT_ERR(hipMemcpy(d, host.data(), len, hipMemcpyHostToDevice), BAD);
        EXPECT_ERR(hipMemcpy(d, host.data(), len, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpy(host2.data(), d, len, hipMemcpyDeviceToHost), BAD);
        EXPECT_ERR(hipMemcpy(host2.data(), d, len, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpy(d, e, len, hipMemcpyDeviceToDevice), BAD);
        EXPECT_ERR(hipMemcpy(d, e, len, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpyHtoD(d, host.data(), len), BAD);
        EXPECT_ERR(hipMemcpyDtoH(host2.data(), d, len), BAD);
        EXPECT_ERR(hipMemcpyDtoD(d, e, len), BAD);
    }
    // A length that ends exactly at the top of the address space (end = 0 after wrapping).
    size_t to_top = (size_t)0 - (uintptr_t)d;
    EXPECT_ERR(hipMemcpy(d, e, to_top, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(d, e, to_top + 1, hipMemcpyDefault), BAD);
    check_untouched("synchronous huge lengths");

    // --- stream-ordered copies (a created stream and the null stream) ------------------
    hipStream_t streams[] = {stream, nullptr};
    for (hipStream_t s : streams) {
        for (hipMemcpyKind k : to_dev) {
            EXPECT_ERR(hipMemcpyAsync(d, host.data(), N + 1, k, s), BAD);
            EXPECT_ERR(hipMemcpyAsync(d + N - 1, host.data(), 2, k, s), BAD);
        }
        for (hipMemcpyKind k : from_dev) EXPECT_ERR(hipMemcpyAsync(host2.data(), d + 1, N, k, s), BAD);
        for (hipMemcpyKind k : dev_dev) {
            EXPECT_ERR(hipMemcpyAsync(d, e, N + 1, k, s), BAD);
            EXPECT_ERR(hipMemcpyAsync(d + 1, e, N, k, s), BAD);
        }
        EXPECT_ERR(hipMemcpyHtoDAsync(d, host.data(), N + 1, s), BAD);
        EXPECT_ERR(hipMemcpyDtoHAsync(host2.data(), d + 1, N, s), BAD);
        EXPECT_ERR(hipMemcpyDtoDAsync(d, e + 1, N, s), BAD);
        EXPECT_ERR(hipMemcpyWithStream(d, e, N + 1, hipMemcpyDefault, s), BAD);
        for (size_t len : HUGE_LENGTHS) {
            EXPECT_ERR(hipMemcpyAsync(d, host.data(), len, hipMemcpyHostToDevice, s), BAD);
            EXPECT_ERR(hipMemcpyAsync(d, host.data(), len, hipMemcpyDefault, s), BAD);
            EXPECT_ERR(hipMemcpyAsync(host2.data(), d, len, hipMemcpyDefault, s), BAD);
            EXPECT_ERR(hipMemcpyAsync(d, e, len, hipMemcpyDeviceToDevice, s), BAD);
            EXPECT_ERR(hipMemcpyHtoDAsync(d, host.data(), len, s), BAD);
            EXPECT_ERR(hipMemcpyDtoHAsync(host2.data(), d, len, s), BAD);
            EXPECT_ERR(hipMemcpyDtoDAsync(d, e, len, s), BAD);
        }
        EXPECT_ERR(hipMemcpyAsync(d, e, to_top, hipMemcpyDefault, s), BAD);
    }
    check_untouched("stream-ordered copies");

    // --- 2D copies: the extent is pitch * (height - 1) + width ------------------------
    EXPECT_ERR(hipMemcpy2D(d, 256, host.data(), 256, 256, N / 256 + 1, hipMemcpyHostToDevice), BAD);
    EXPECT_ERR(hipMemcpy2D(d, 512, host.data(), 256, 256, N / 512 + 1, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy2D(host2.data(), 256, d, 256, 256, N / 256 + 1, hipMemcpyDeviceToHost), BAD);
    EXPECT_ERR(hipMemcpy2D(d, 256, e, 256, 257, N / 256, hipMemcpyDeviceToDevice),
               hipErrorInvalidPitchValue);
    EXPECT_ERR(hipMemcpy2D(d, 256, e, 256, 256, SIZE_MAX / 128, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy2D(d, SIZE_MAX / 2, e, 256, 256, 3, hipMemcpyDefault), BAD);
    for (hipStream_t s : streams) {
        EXPECT_ERR(hipMemcpy2DAsync(d, 256, host.data(), 256, 256, N / 256 + 1,
                                    hipMemcpyHostToDevice, s),
                   BAD);
        EXPECT_ERR(hipMemcpy2DAsync(host2.data(), 256, d, 512, 256, N / 512 + 1,
                                    hipMemcpyDefault, s),
                   BAD);
        EXPECT_ERR(hipMemcpy2DAsync(d, 256, e, 256, 256, SIZE_MAX / 128, hipMemcpyDefault, s),
                   BAD);
    }
    check_untouched("2D copies");

    // --- fills ----------------------------------------------------------------------
    EXPECT_ERR(hipMemset(d, 0, N + 1), BAD);
    EXPECT_ERR(hipMemset(d + 1, 0, N), BAD);
    EXPECT_ERR(hipMemsetD8(d, 0, N + 1), BAD);
    EXPECT_ERR(hipMemsetD16(d, 0, N / 2 + 1), BAD);
    EXPECT_ERR(hipMemsetD32(d, 0, N / 4 + 1), BAD);
    EXPECT_ERR(hipMemsetD32(d + 4, 0, N / 4), BAD);
    EXPECT_ERR(hipMemset2D(d, 256, 0, 256, N / 256 + 1), BAD);
    // A single row wider than its pitch is still a range: N + 1 bytes.
    EXPECT_ERR(hipMemset2D(d, 16, 0, N + 1, 1), BAD);
    for (size_t len : HUGE_LENGTHS) {
        EXPECT_ERR(hipMemset(d, 0, len), BAD);
        EXPECT_ERR(hipMemsetD32(d, 0, len / 4), BAD);
        EXPECT_ERR(hipMemsetD16(d, 0, len), BAD);
    }
    for (hipStream_t s : streams) {
        EXPECT_ERR(hipMemsetAsync(d, 0, N + 1, s), BAD);
        EXPECT_ERR(hipMemsetD8Async(d + 1, 0, N, s), BAD);
        EXPECT_ERR(hipMemsetD16Async(d, 0, N / 2 + 1, s), BAD);
        EXPECT_ERR(hipMemsetD32Async(d, 0, N / 4 + 1, s), BAD);
        for (size_t len : HUGE_LENGTHS) {
            EXPECT_ERR(hipMemsetAsync(d, 0, len, s), BAD);
            EXPECT_ERR(hipMemsetD32Async(d, 0, len / 4, s), BAD);
        }
    }
    check_untouched("fills");

    // --- host allocations: pinned, managed, registered -------------------------------
    EXPECT_ERR(hipMemcpy(pinned, d, N + 1, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(pinned + 1, host.data(), N, hipMemcpyHostToHost), BAD);
    EXPECT_ERR(hipMemcpy(d, pinned + 1, N, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(managed, host.data(), N + 1, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(registered, d, N + 1, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(registered + 1, host.data(), N, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemset(managed, 0, N + 1), BAD);
    EXPECT_ERR(hipMemset(pinned + 1, 0, N), BAD);
    for (hipStream_t s : streams) {
        EXPECT_ERR(hipMemcpyAsync(pinned, d, N + 1, hipMemcpyDefault, s), BAD);
        EXPECT_ERR(hipMemcpyAsync(d, pinned + 1, N, hipMemcpyDefault, s), BAD);
        EXPECT_ERR(hipMemcpyAsync(managed + 1, e, N, hipMemcpyDefault, s), BAD);
        EXPECT_ERR(hipMemcpyAsync(registered, host.data(), N + 1, hipMemcpyDefault, s), BAD);
        EXPECT_ERR(hipMemsetAsync(managed, 0, N + 1, s), BAD);
        EXPECT_ERR(hipMemsetD32Async(pinned, 0, N / 4 + 1, s), BAD);
    }
    for (size_t len : HUGE_LENGTHS) {
        EXPECT_ERR(hipMemcpy(pinned, host.data(), len, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpy(host2.data(), managed, len, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpyAsync(registered, host.data(), len, hipMemcpyDefault, stream), BAD);
    }
    check_untouched("host allocations");

    // --- device variables: offset + size past the variable ---------------------------
    const size_t SYM = sizeof(int) * 64;
    EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(sym), host.data(), SYM + 1), BAD);
    EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(sym), host.data(), 4, SYM - 3), BAD);
    EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(sym), host.data(), 4, SIZE_MAX - 1), BAD);
    EXPECT_ERR(hipMemcpyFromSymbol(host2.data(), HIP_SYMBOL(sym), SYM + 1), BAD);
    EXPECT_ERR(hipMemcpyFromSymbol(host2.data(), HIP_SYMBOL(sym), SIZE_MAX, 8), BAD);
    EXPECT_ERR(hipMemcpyToSymbolAsync(HIP_SYMBOL(sym), host.data(), SYM + 1, 0,
                                      hipMemcpyHostToDevice, stream),
               BAD);
    EXPECT_ERR(hipMemcpyFromSymbolAsync(host2.data(), HIP_SYMBOL(sym), 8, SYM - 4,
                                        hipMemcpyDeviceToHost, stream),
               BAD);
    // The variable's address is a device allocation to hipMemcpyDefault too.
    void* sym_addr = nullptr;
    EXPECT_OK(hipGetSymbolAddress(&sym_addr, HIP_SYMBOL(sym)));
    EXPECT_ERR(hipMemcpy(sym_addr, host.data(), SYM + 1, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpyAsync(host2.data(), (char*)sym_addr + 4, SYM, hipMemcpyDefault, stream),
               BAD);
    check_untouched("device variables");

    // --- pageable host to host: left to the OS, but a huge length fails cleanly ----------
    EXPECT_ERR(hipMemcpy(host2.data(), host.data(), (size_t)1 << 63, hipMemcpyHostToHost), BAD);
    EXPECT_ERR(hipMemcpy(host2.data(), host.data(), (size_t)1 << 63, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpy(host2.data(), host.data(), SIZE_MAX, hipMemcpyDefault), BAD);
    EXPECT_ERR(hipMemcpyAsync(host2.data(), host.data(), (size_t)1 << 63, hipMemcpyDefault,
                              stream),
               BAD);
    EXPECT_ERR(hipMemcpy2D(host2.data(), 1 << 20, host.data(), 16, 16, (size_t)1 << 40,
                           hipMemcpyHostToHost),
               BAD);
    // A host buffer whose second page is unmapped: every copy that would touch that page
    // fails before copying, whichever side the host buffer is on.
    {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        unsigned char* two = (unsigned char*)mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_TRUE(two != MAP_FAILED);
        EXPECT_EQ(munmap(two + page, page), 0);
        unsigned char* half = two + page / 2;
        EXPECT_ERR(hipMemcpy(host2.data(), half, page, hipMemcpyHostToHost), BAD);
        EXPECT_ERR(hipMemcpy(half, host.data(), page, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpy(d, half, page, hipMemcpyHostToDevice), BAD);
        EXPECT_ERR(hipMemcpy(half, d, page, hipMemcpyDeviceToHost), BAD);
        EXPECT_ERR(hipMemcpy(half, pinned, page, hipMemcpyDefault), BAD);
        EXPECT_ERR(hipMemcpyAsync(d, half, page, hipMemcpyDefault, stream), BAD);
        EXPECT_ERR(hipMemcpyAsync(half, d, page, hipMemcpyDeviceToHost, stream), BAD);
        EXPECT_ERR(hipMemcpy2D(d, 256, two, page, 256, 2, hipMemcpyHostToDevice), BAD);
        EXPECT_ERR(hipMemcpy2DAsync(two, page, d, 256, 256, 2, hipMemcpyDefault, stream), BAD);
        // The mapped half alone is fine (then d gets its fill back: dev[2] holds 3s).
        EXPECT_OK(hipMemcpy(d, two, page / 2, hipMemcpyHostToDevice));
        EXPECT_OK(hipMemset(d, 3, page / 2));
        EXPECT_EQ(munmap(two, page), 0);
    }
    check_untouched("pageable host copies");

    // --- exact fits still work ------------------------------------------------------
    {
        unsigned char* x = nullptr;
        EXPECT_OK(hipMalloc(&x, N));
        std::vector<unsigned char> pat(N), back(N, 0);
        for (size_t k = 0; k < N; ++k) pat[k] = (unsigned char)(k * 7 + 3);
        EXPECT_OK(hipMemcpy(x, pat.data(), N, hipMemcpyDefault));
        EXPECT_OK(hipMemcpy(back.data(), x, N, hipMemcpyDeviceToHost));
        EXPECT_TRUE(back == pat);
        EXPECT_OK(hipMemcpy(x + N - 1, host.data(), 1, hipMemcpyHostToDevice));
        EXPECT_OK(hipMemcpyAsync(x + N - 2, host.data(), 2, hipMemcpyDefault, stream));
        EXPECT_OK(hipMemcpyDtoD(x, e, N));
        EXPECT_OK(hipMemcpy2D(x, 256, host.data(), 256, 256, N / 256, hipMemcpyHostToDevice));
        EXPECT_OK(hipMemcpy2DAsync(host2.data(), 512, x, 512, 512, N / 512, hipMemcpyDefault,
                                   stream));
        EXPECT_OK(hipMemset(x, 9, N));
        EXPECT_OK(hipMemsetD32(x + 4, 9, N / 4 - 1));
        EXPECT_OK(hipMemset2D(x, 16, 1, N, 1));
        EXPECT_OK(hipMemsetD16Async(x + N - 2, 7, 1, stream));
        EXPECT_OK(hipMemcpy(pinned, x, N, hipMemcpyDefault));
        EXPECT_OK(hipMemcpyAsync(x, registered, N, hipMemcpyDefault, stream));
        EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(sym), host.data(), 4, SYM - 4));
        EXPECT_OK(hipStreamSynchronize(stream));
        EXPECT_OK(hipMemcpy(back.data(), x, N, hipMemcpyDefault));
        EXPECT_EQ(back[0], 0x63);
        EXPECT_EQ(back[N - 1], 0x63);
        EXPECT_OK(hipFree(x));
        // Restore what the exact fits changed, then everything else must be as it was.
        std::memset(pinned, 0x61, N);
        std::vector<int> s(64, 0x64646464);
        EXPECT_OK(hipMemcpyToSymbol(HIP_SYMBOL(sym), s.data(), SYM));
        check_untouched("exact fits");
    }

    EXPECT_OK(hipStreamDestroy(stream));
    EXPECT_OK(hipHostUnregister(registered));
    EXPECT_OK(hipHostFree(pinned));
    EXPECT_OK(hipFree(managed));
    for (int i = 0; i < NDEV; ++i) EXPECT_OK(hipFree(dev[i]));
    return finish("bounds/copies");
}
