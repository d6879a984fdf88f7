// Code images without a length (hipModuleLoadData, hipModuleLoadDataEx,
// __hipRegisterFatBinary) whose header claims more bytes than exist: each image is
// placed so that it ends exactly where an unmapped page begins, so any read past the
// bytes that really exist would fault. Every truncation and every lying size field must
// come back as hipErrorInvalidImage; the complete images, ending at the same boundary,
// must still load. The real images are this program's own offload bundle (its
// `.hip_fatbin` section, read from /proc/self/exe) and the code object inside it for
// the running device.
#include "../check.h"
#include "own_bundle.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string>

extern "C" __global__ void probe(int* out) { out[0] = 42; }

// `bytes` copied so that its last byte is the last byte before an unmapped page. The
// mapping is never freed: a loaded module may still refer to it.
static const unsigned char* at_page_end(const Bytes& bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (bytes.size() + page - 1) / page + 1;
    char* base = (char*)mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        std::perror("mmap");
        std::exit(2);
    }
    char* guard = base + (pages - 1) * page;
    if (munmap(guard, page) != 0) {
        std::perror("munmap");
        std::exit(2);
    }
    unsigned char* start = (unsigned char*)guard - bytes.size();
    std::memcpy(start, bytes.data(), bytes.size());
    return start;
}

static Bytes prefix(const Bytes& b, size_t n) { return Bytes(b.begin(), b.begin() + n); }

static void put_u64(Bytes& b, size_t at, uint64_t v) { std::memcpy(&b[at], &v, 8); }
static void put_u32(Bytes& b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); }
static void put_u16(Bytes& b, size_t at, uint16_t v) { std::memcpy(&b[at], &v, 2); }
static void expect_loads(const Bytes& image, const char* what) {
    hipModule_t module = nullptr;
    hipError_t e = hipModuleLoadData(&module, at_page_end(image));
    if (e != hipSuccess) {
        std::fprintf(stderr, "FAIL %s (%zu bytes): hipModuleLoadData returned %s\n", what,
                     image.size(), err_name(e));
        ++failures;
        return;
    }
    hipFunction_t f = nullptr;
    EXPECT_OK(hipModuleGetFunction(&f, module, "probe"));
    EXPECT_OK(hipModuleUnload(module));
}

static void expect_invalid(const Bytes& image, const char* what) {
    hipModule_t module = nullptr;
    const unsigned char* p = at_page_end(image);
    hipError_t e = hipModuleLoadData(&module, p);
    hipError_t ex = hipModuleLoadDataEx(&module, p, 0, nullptr, nullptr);
    if (e != hipErrorInvalidImage || ex != hipErrorInvalidImage) {
        std::fprintf(stderr,
                     "FAIL %s (%zu bytes at a page end): hipModuleLoadData returned %s, "
                     "hipModuleLoadDataEx %s, expected hipErrorInvalidImage\n",
                     what, image.size(), err_name(e), err_name(ex));
        ++failures;
    }
    (void)hipGetLastError();
}

struct Wrapper {
    uint32_t magic, version;
    const void* bundle;
    void* reserved;
};

static Bytes wrapper_bytes(const void* bundle) {
    Wrapper w = {0x48495046, 1, bundle, nullptr};
    Bytes b(sizeof w);
    std::memcpy(b.data(), &w, sizeof w);
    return b;
}

extern "C" void** __hipRegisterFatBinary(const void* wrapper);
extern "C" void __hipRegisterFunction(void** modules, const void* host_function,
                                      char* device_function, const char* device_name,
                                      unsigned int thread_limit, void* tid, void* bid,
                                      dim3* block_dim, dim3* grid_dim, int* wave_size);
extern "C" void __hipUnregisterFatBinary(void** modules);

int main() {
    const Bytes bundle = own_bundle();
    const std::pair<uint64_t, uint64_t> entry = device_entry(bundle);
    const Bytes co(bundle.begin() + entry.first, bundle.begin() + entry.first + entry.second);
    std::printf("own bundle %zu bytes, code object %zu bytes\n", bundle.size(), co.size());

    // Complete images ending at an unmapped page load: the checks do not over-read.
    expect_loads(bundle, "complete bundle");
    expect_loads(co, "complete code object");
    expect_loads(wrapper_bytes(at_page_end(bundle)), "HIPF wrapper of a complete bundle");

    // Offload bundle: cut inside the magic, the count, the entry table, an id, the data.
    uint64_t first_id_len = get_u64(bundle, 48);
    for (size_t cut : {size_t(10), size_t(24), size_t(30), size_t(40), size_t(56),
                       size_t(56 + first_id_len), size_t(56 + first_id_len + 30),
                       bundle.size() / 2, bundle.size() - 1})
        expect_invalid(prefix(bundle, cut), ("bundle cut to " + std::to_string(cut)).c_str());
    // Entry counts and sizes that reach past the end.
    Bytes header = prefix(bundle, 32);
    put_u64(header, 24, 4000);
    expect_invalid(header, "bundle header claiming 4000 entries");
    Bytes big_entry = bundle;
    put_u64(big_entry, 40, get_u64(bundle, 40) + (1 << 20));  // first entry's size
    expect_invalid(big_entry, "bundle entry 1 MiB longer than the bundle");
    Bytes far_entry = bundle;
    put_u64(far_entry, 32, uint64_t(1) << 35);  // first entry's offset: 32 GiB
    put_u64(far_entry, 40, 16);
    expect_invalid(far_entry, "bundle entry 32 GiB away");

    // Compressed bundles (CCOB): sizes in the header past the end, all three versions.
    for (uint16_t version : {1, 2, 3}) {
        Bytes ccob(64, 0);
        std::memcpy(ccob.data(), "CCOB", 4);
        put_u16(ccob, 4, version);
        put_u16(ccob, 6, 1);  // zstd
        size_t header_len = version == 1 ? 20 : version == 2 ? 24 : 32;
        if (version == 2) {
            put_u32(ccob, 8, 1 << 20);   // total file size
            put_u32(ccob, 12, 4 << 20);  // uncompressed size
        } else if (version == 3) {
            put_u64(ccob, 8, uint64_t(1) << 33);
            put_u64(ccob, 16, uint64_t(1) << 34);
        } else {
            put_u32(ccob, 8, 4 << 20);
        }
        // A zstd frame whose only block claims 1 MiB of raw bytes.
        put_u32(ccob, header_len, 0xFD2FB528);
        ccob[header_len + 4] = 0x00;  // frame header: window descriptor follows
        ccob[header_len + 5] = 0x58;
        uint32_t block = (1u << 20) << 3 | 1;  // raw, last
        ccob[header_len + 6] = block & 0xff;
        ccob[header_len + 7] = (block >> 8) & 0xff;
        ccob[header_len + 8] = (block >> 16) & 0xff;
        ccob.resize(header_len + 9);
        expect_invalid(ccob, ("CCOB v" + std::to_string(version) + " claiming more").c_str());
        expect_invalid(prefix(ccob, 6), "CCOB cut inside its header");
    }

    // ELF code object: truncated, and header fields that point past the end.
    for (size_t cut : {size_t(3), size_t(40), size_t(64), co.size() / 2, co.size() - 1})
        expect_invalid(prefix(co, cut), ("code object cut to " + std::to_string(cut)).c_str());
    Bytes far_sections = prefix(co, 64);
    put_u64(far_sections, 40, uint64_t(1) << 34);  // e_shoff: 16 GiB
    expect_invalid(far_sections, "ELF header with e_shoff 16 GiB away");
    Bytes far_segments = co;
    put_u64(far_segments, 32, co.size() + 4096);  // e_phoff past the end
    expect_invalid(far_segments, "ELF header with e_phoff past the end");

    // HIPF wrappers: of a truncated bundle, of a pointer into nothing, and cut short.
    expect_invalid(wrapper_bytes(at_page_end(prefix(bundle, 40))), "HIPF wrapper, bundle cut");
    const unsigned char* gone = at_page_end(Bytes(1, 0)) + 1;  // the unmapped page
    expect_invalid(wrapper_bytes(gone), "HIPF wrapper of unmapped memory");
    expect_invalid(prefix(wrapper_bytes(at_page_end(bundle)), 12), "HIPF wrapper cut short");

    // __hipRegisterFatBinary: the same lies, through the path a program's constructor
    // takes. Registration (a bad header) or the first use of a kernel (the device's code
    // object cut short) fails; nothing crashes. Only the device's entry is read, so the
    // cut goes through it.
    static char host_stub_a, host_stub_b;
    Bytes wrap_header = wrapper_bytes(at_page_end(prefix(bundle, 40)));
    void** bad_header = __hipRegisterFatBinary(at_page_end(wrap_header));
    EXPECT_TRUE(bad_header == nullptr);
    Bytes wrap_data = wrapper_bytes(at_page_end(prefix(bundle, entry.first + entry.second / 2)));
    void** bad_data = __hipRegisterFatBinary(at_page_end(wrap_data));
    if (bad_data != nullptr) {
        __hipRegisterFunction(bad_data, &host_stub_a, (char*)"probe", "probe", 0, nullptr,
                              nullptr, nullptr, nullptr, nullptr);
        hipFuncAttributes attr;
        EXPECT_ERR(hipFuncGetAttributes(&attr, &host_stub_a), hipErrorInvalidImage);
        __hipUnregisterFatBinary(bad_data);
    }
    Bytes wrap_good = wrapper_bytes(at_page_end(bundle));
    void** good = __hipRegisterFatBinary(at_page_end(wrap_good));
    EXPECT_TRUE(good != nullptr);
    if (good != nullptr) {
        __hipRegisterFunction(good, &host_stub_b, (char*)"probe", "probe", 0, nullptr, nullptr,
                              nullptr, nullptr, nullptr);
        hipFuncAttributes attr;
        EXPECT_OK(hipFuncGetAttributes(&attr, &host_stub_b));
        __hipUnregisterFatBinary(good);
    }

    // The program's own kernel still runs.
    int* out = nullptr;
    EXPECT_OK(hipMalloc(&out, sizeof(int)));
    probe<<<1, 1>>>(out);
    int value = 0;
    EXPECT_OK(hipMemcpy(&value, out, sizeof value, hipMemcpyDeviceToHost));
    EXPECT_EQ(value, 42);
    EXPECT_OK(hipFree(out));
    return finish("truncated_images");
}
