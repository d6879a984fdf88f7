// api_callbacks: AMD's callback interface for tracing tools, as the profile's runtime has it.
// ROCm 5 (5.0-5.2's table): hipRegisterActivityCallback hands out the record an id's API
// callback gets at the entry (phase 0) and the exit (phase 1), an API callback alone is never
// called, hipInitActivityCallback / hipEnableActivityCallback report each dispatch and copy
// under a record id given out while the call runs, with the device's begin and end times.
// ROCm 6 and 7: those calls answer hipErrorNotSupported (false). Every profile:
// hipRegisterTracerCallback's report function gets each call (its correlation id, enter and
// exit) and each completed dispatch (kernel name) and copy (bytes) under that call's id.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../check.h"
#include "abi.h"

#define EXPECT(cond)                                                                             \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            std::fprintf(stderr, "FAIL %s:%d %s\n", __FILE__, __LINE__, #cond);                  \
            ++failures;                                                                          \
        }                                                                                        \
    } while (0)

// activity_record_t (prof_protocol.h), 64 bytes.
struct Record {
    uint32_t domain, kind, op;
    uint64_t correlation_id, begin_ns, end_ns;
    int device_id;
    uint64_t queue_id;
    uint64_t bytes_or_name;
};

enum : uint32_t {
    ID_DEVICE_SYNCHRONIZE = 48,
    ID_LAUNCH_KERNEL = 107,
    ID_MALLOC = 108,
    ID_MEMCPY = 125,
    KIND_KERNEL = 0x11F0,
    KIND_D2H = 0x11F3,
    KIND_H2D = 0x11F4,
};

struct ApiEvent {
    uint32_t id, phase;
    uint64_t correlation;
};
struct OpEvent {
    Record record;
    std::string kernel;
};

static std::vector<ApiEvent> api_events;
static std::vector<OpEvent> op_events;

__global__ void fill_kernel(int* out, int value) { out[threadIdx.x] = value + threadIdx.x; }

static const size_t N = 64;
static const size_t BYTES = 1 << 20;

// A kernel launch, a copy each way and a synchronisation.
static void work(int* d, int value) {
    void* args[] = {&d, &value};
    CHECK(hipLaunchKernel((const void*)fill_kernel, dim3(1), dim3(N), args, 0, nullptr));
    CHECK(hipLaunchKernel((const void*)fill_kernel, dim3(1), dim3(N), args, 0, nullptr));
    std::vector<int> host(BYTES / sizeof(int));
    CHECK(hipMemcpy(host.data(), d, BYTES, hipMemcpyDeviceToHost));
    EXPECT(host[5] == value + 5);
    CHECK(hipMemcpy(d, host.data(), BYTES, hipMemcpyHostToDevice));
    CHECK(hipDeviceSynchronize());
}

static std::vector<ApiEvent> calls_of(uint32_t id) {
    std::vector<ApiEvent> out;
    for (auto& e : api_events)
        if (e.id == id) out.push_back(e);
    return out;
}

// Each call of `id` was seen `n` times, each as an entry then an exit under one correlation
// id, in order, and returns those ids.
static std::vector<uint64_t> expect_pairs(uint32_t id, size_t n, const char* what) {
    auto events = calls_of(id);
    std::vector<uint64_t> ids;
    if (events.size() != 2 * n) {
        std::fprintf(stderr, "FAIL %s: %zu events for id %u, expected %zu\n", what,
                     events.size(), id, 2 * n);
        ++failures;
        return ids;
    }
    for (size_t i = 0; i < n; ++i) {
        EXPECT(events[2 * i].phase == 0);
        EXPECT(events[2 * i + 1].phase == 1);
        EXPECT(events[2 * i].correlation == events[2 * i + 1].correlation);
        EXPECT(events[2 * i].correlation != 0);
        if (i > 0) EXPECT(events[2 * i].correlation > events[2 * i - 1].correlation);
        ids.push_back(events[2 * i].correlation);
    }
    return ids;
}

// The two dispatches and two copies of `work`, in order, with times; returns them.
static std::vector<Record> expect_work_records(bool with_names) {
    std::vector<Record> dispatches, copies;
    for (auto& e : op_events) (e.record.op == 0 ? dispatches : copies).push_back(e.record);
    EXPECT(dispatches.size() == 2);
    EXPECT(copies.size() == 2);
    if (dispatches.size() != 2 || copies.size() != 2) return {};
    for (auto& r : dispatches) {
        EXPECT(r.domain == 2);
        EXPECT(r.kind == KIND_KERNEL);
        EXPECT(r.begin_ns > 0 && r.begin_ns <= r.end_ns);
        EXPECT(r.device_id == 0);
    }
    for (auto& e : op_events)
        if (e.record.op == 0) {
            if (with_names)
                EXPECT(e.kernel.find("fill_kernel") != std::string::npos);
            else
                EXPECT(e.record.bytes_or_name == 0);
        }
    EXPECT(copies[0].kind == KIND_D2H);
    EXPECT(copies[1].kind == KIND_H2D);
    for (auto& r : copies) {
        EXPECT(r.domain == 2);
        EXPECT(r.bytes_or_name == BYTES);
        EXPECT(r.begin_ns > 0 && r.begin_ns <= r.end_ns);
    }
    // Stream order: the second kernel after the first, the copies after both.
    EXPECT(dispatches[0].end_ns <= dispatches[1].begin_ns);
    EXPECT(dispatches[1].end_ns <= copies[0].begin_ns);
    EXPECT(copies[0].end_ns <= copies[1].begin_ns);
    return {dispatches[0], dispatches[1], copies[0], copies[1]};
}

// ---- ROCm 5.2's table ----

static int act_marker, fun_marker, op_marker;
struct ApiData {
    uint64_t correlation_id;
    uint32_t phase;
    char args[2048];
};
static std::vector<ApiData*> open_calls;
static uint64_t next_correlation = 1;
static std::vector<std::pair<uint64_t, uint64_t>> record_ids;  // (record id, open call)

static void* legacy_act(uint32_t, Record*, const void*, void* arg) {
    if (arg == nullptr) {  // entry
        auto* data = new ApiData{};
        data->correlation_id = next_correlation++;
        open_calls.push_back(data);
        return data;
    }
    EXPECT(arg == &act_marker);
    EXPECT(!open_calls.empty());
    if (!open_calls.empty()) {
        delete open_calls.back();
        open_calls.pop_back();
    }
    return nullptr;
}

static void legacy_fun(uint32_t domain, uint32_t id, const void* data, void* arg) {
    EXPECT(domain == 3);
    EXPECT(arg == &fun_marker);
    auto* d = static_cast<const ApiData*>(data);
    api_events.push_back({id, d->phase, d->correlation_id});
}

static void legacy_id(uint64_t record_id) {
    record_ids.push_back({record_id, open_calls.empty() ? 0 : open_calls.back()->correlation_id});
}

static void legacy_op(uint32_t op, Record* record, void* arg) {
    EXPECT(arg == &op_marker);
    EXPECT(op == record->op);
    op_events.push_back({*record, ""});
}

static void legacy(int* d) {
    const uint32_t ids[] = {ID_DEVICE_SYNCHRONIZE, ID_LAUNCH_KERNEL, ID_MALLOC, ID_MEMCPY};
    if (expected_abi() != 5) {
        EXPECT_ERR(hipRegisterApiCallback(ID_MALLOC, (void*)legacy_fun, nullptr),
                   hipErrorNotSupported);
        EXPECT_ERR(hipRegisterActivityCallback(ID_MALLOC, (void*)legacy_act, nullptr),
                   hipErrorNotSupported);
        EXPECT_ERR(hipRemoveApiCallback(ID_MALLOC), hipErrorNotSupported);
        EXPECT_ERR(hipRemoveActivityCallback(ID_MALLOC), hipErrorNotSupported);
        hipInitActivityCallback((void*)legacy_id, (void*)legacy_op, nullptr);
        EXPECT(!hipEnableActivityCallback(0, true));
        work(d, 1);
        EXPECT(api_events.empty() && op_events.empty() && record_ids.empty());
        return;
    }
    EXPECT_ERR(hipRegisterApiCallback(0, (void*)legacy_fun, nullptr), hipErrorInvalidValue);
    EXPECT_ERR(hipRegisterActivityCallback(100000, (void*)legacy_act, nullptr),
               hipErrorInvalidValue);
    EXPECT(!hipEnableActivityCallback(3, true));

    // An API callback alone is never called.
    CHECK(hipRegisterApiCallback(ID_MALLOC, (void*)legacy_fun, &fun_marker));
    void* p = nullptr;
    CHECK(hipMalloc(&p, 64));
    CHECK(hipFree(p));
    EXPECT(api_events.empty());

    for (uint32_t id : ids) {
        CHECK(hipRegisterApiCallback(id, (void*)legacy_fun, &fun_marker));
        CHECK(hipRegisterActivityCallback(id, (void*)legacy_act, &act_marker));
    }
    hipInitActivityCallback((void*)legacy_id, (void*)legacy_op, &op_marker);
    EXPECT(hipEnableActivityCallback(0, true));
    EXPECT(hipEnableActivityCallback(1, true));
    CHECK(hipMalloc(&p, 64));
    work(d, 2);
    CHECK(hipFree(p));

    expect_pairs(ID_MALLOC, 1, "hipMalloc");
    auto launches = expect_pairs(ID_LAUNCH_KERNEL, 2, "hipLaunchKernel");
    auto copies = expect_pairs(ID_MEMCPY, 2, "hipMemcpy");
    expect_pairs(ID_DEVICE_SYNCHRONIZE, 1, "hipDeviceSynchronize");
    EXPECT(open_calls.empty());
    // The first event is hipMalloc's entry; hipFree has no callbacks.
    EXPECT(!api_events.empty() && api_events[0].id == ID_MALLOC);
    EXPECT(api_events.back().id == ID_DEVICE_SYNCHRONIZE);

    // Each piece of work has a record id, handed out during its call, and its record that id.
    auto records = expect_work_records(false);
    EXPECT(record_ids.size() == 4);
    if (records.size() == 4 && record_ids.size() == 4 && launches.size() == 2 &&
        copies.size() == 2) {
        const uint64_t calls[] = {launches[0], launches[1], copies[0], copies[1]};
        for (int i = 0; i < 4; ++i) {
            EXPECT(records[i].correlation_id == record_ids[i].first);
            EXPECT(record_ids[i].second == calls[i]);
        }
        EXPECT(record_ids[1].first == record_ids[0].first + 1);
    }

    // Removed: nothing more.
    for (uint32_t id : ids) {
        CHECK(hipRemoveActivityCallback(id));
        CHECK(hipRemoveApiCallback(id));
    }
    EXPECT(hipEnableActivityCallback(0, false));
    EXPECT(hipEnableActivityCallback(1, false));
    api_events.clear();
    op_events.clear();
    record_ids.clear();
    work(d, 3);
    EXPECT(api_events.empty() && op_events.empty() && record_ids.empty());
}

// ---- ROCm 5.3 on: hipRegisterTracerCallback ----

static size_t api_data_size() { return expected_abi() == 5 ? 832 : 1512; }
static uint64_t tracer_correlation = 1000;

static void phase_enter(uint32_t id, void* data) {
    api_events.push_back({id, 0, *static_cast<uint64_t*>(data)});
}
static void phase_exit(uint32_t id, void* data) {
    api_events.push_back({id, 1, *static_cast<uint64_t*>(data)});
}

static int report(uint32_t domain, uint32_t op, void* data) {
    if (domain == 3) {
        if (data == nullptr) return 1;
        auto* bytes = static_cast<char*>(data);
        *reinterpret_cast<uint64_t*>(bytes) = ++tracer_correlation;
        void (*enter)(uint32_t, void*) = phase_enter;
        void (*exit)(uint32_t, void*) = phase_exit;
        std::memcpy(bytes + api_data_size() + 16, &enter, sizeof enter);
        std::memcpy(bytes + api_data_size() + 24, &exit, sizeof exit);
        return 0;
    }
    if (domain == 2) {
        if (data == nullptr) return op <= 1 ? 0 : 1;
        auto* r = static_cast<Record*>(data);
        EXPECT(r->op == op);
        std::string name = r->op == 0 && r->bytes_or_name
                               ? std::string(reinterpret_cast<const char*>(r->bytes_or_name))
                               : std::string();
        op_events.push_back({*r, name});
        return 0;
    }
    return 1;
}

static void tracer(int* d) {
    api_events.clear();
    op_events.clear();
    hipRegisterTracerCallback(report);
    work(d, 4);
    hipRegisterTracerCallback(nullptr);

    auto launches = expect_pairs(ID_LAUNCH_KERNEL, 2, "hipLaunchKernel (tracer)");
    auto copies = expect_pairs(ID_MEMCPY, 2, "hipMemcpy (tracer)");
    expect_pairs(ID_DEVICE_SYNCHRONIZE, 1, "hipDeviceSynchronize (tracer)");
    auto records = expect_work_records(true);
    if (records.size() == 4 && launches.size() == 2 && copies.size() == 2) {
        // Each record carries the correlation id of the call that started the work.
        EXPECT(records[0].correlation_id == launches[0]);
        EXPECT(records[1].correlation_id == launches[1]);
        EXPECT(records[2].correlation_id == copies[0]);
        EXPECT(records[3].correlation_id == copies[1]);
    }
    // Calls nest: the first launch's entry comes before its exit, and before the second's.
    EXPECT(!api_events.empty() && api_events[0].id == ID_LAUNCH_KERNEL &&
           api_events[0].phase == 0);

    // Stopped: nothing more.
    api_events.clear();
    op_events.clear();
    work(d, 5);
    EXPECT(api_events.empty() && op_events.empty());
}

int main() {
    int* d = nullptr;
    CHECK(hipMalloc(&d, BYTES));
    legacy(d);
    tracer(d);
    CHECK(hipFree(d));
    return finish("api_callbacks");
}
