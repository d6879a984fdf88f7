// This program's own offload bundle, for the modules_bad programs: the `.hip_fatbin`
// section clang embedded, read back from /proc/self/exe, and the entry in it for the
// running device.
#ifndef C_TESTS_MODULES_BAD_OWN_BUNDLE_H
#define C_TESTS_MODULES_BAD_OWN_BUNDLE_H

#include <hip/hip_runtime.h>

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

typedef std::vector<unsigned char> Bytes;

static uint64_t get_u64(const Bytes& b, size_t at) {
    uint64_t v;
    std::memcpy(&v, &b[at], 8);
    return v;
}

// This program's `.hip_fatbin` section: the offload bundle clang embedded.
static Bytes own_bundle() {
    std::ifstream f("/proc/self/exe", std::ios::binary);
    Bytes exe((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    Elf64_Ehdr eh;
    std::memcpy(&eh, exe.data(), sizeof eh);
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    std::memcpy(sh.data(), &exe[eh.e_shoff], eh.e_shnum * sizeof(Elf64_Shdr));
    const char* names = (const char*)&exe[sh[eh.e_shstrndx].sh_offset];
    for (const Elf64_Shdr& s : sh) {
        if (std::strcmp(names + s.sh_name, ".hip_fatbin") == 0) {
            Bytes bundle(exe.begin() + s.sh_offset, exe.begin() + s.sh_offset + s.sh_size);
            // The section is padded to its alignment; the bundle ends at its last entry.
            uint64_t count = get_u64(bundle, 24), end = 0;
            size_t pos = 32;
            for (uint64_t i = 0; i < count; ++i) {
                uint64_t off = get_u64(bundle, pos), size = get_u64(bundle, pos + 8);
                end = end > off + size ? end : off + size;
                pos += 24 + get_u64(bundle, pos + 16);
            }
            bundle.resize(end);
            return bundle;
        }
    }
    std::fprintf(stderr, "no .hip_fatbin section in /proc/self/exe\n");
    std::exit(2);
}

// Offset and size of the bundle entry for the running device's processor (gfx942 or
// gfx90a).
static std::pair<uint64_t, uint64_t> device_entry(const Bytes& bundle) {
    hipDeviceProp_t prop;
    if (hipGetDeviceProperties(&prop, 0) != hipSuccess) std::exit(2);
    std::string processor(prop.gcnArchName);
    processor = processor.substr(0, processor.find(':'));
    uint64_t count = get_u64(bundle, 24);
    size_t pos = 32;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t off = get_u64(bundle, pos), size = get_u64(bundle, pos + 8);
        uint64_t id_len = get_u64(bundle, pos + 16);
        std::string id((const char*)&bundle[pos + 24], id_len);
        if (id.size() >= processor.size() &&
            id.compare(id.size() - processor.size(), processor.size(), processor) == 0)
            return {off, size};
        pos += 24 + id_len;
    }
    std::fprintf(stderr, "no %s entry in the bundle\n", processor.c_str());
    std::exit(2);
}

#endif // C_TESTS_MODULES_BAD_OWN_BUNDLE_H
