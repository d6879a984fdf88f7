// hipshim-test: targets=gfx942
// kernarg_slots: every launch writes its kernarg segment into a slot of its queue that stays
// its own until it completes: a small slot (512 bytes) when the segment fits, a large one
// (4 KiB) otherwise (hsa/queue.rs). Kernels of every size class are launched interleaved,
// more of them than the queue has slots (so both regions wrap), with graph launches between
// them, and each kernel checks on the device that the by-value struct it was given arrived
// whole. The segments of consecutive small launches are packed densely, several to a page, and
// every segment is as aligned as its kernel asks.
#include "../check.h"

#include <cstdint>
#include <vector>

// With the 256 bytes of hidden arguments the kernels below take (they read blockDim), their
// code object v5 kernarg segments are: small 272 bytes, edge exactly 512 (the largest that
// fits a small slot), medium 544 and big 3336 (large slots), aligned 2304 bytes aligned to
// 1024 (a large slot, for its alignment).
struct Edge {
    unsigned v[62];
};
struct Medium {
    unsigned v[70];
};
struct Big {
    unsigned v[768];
};
struct alignas(1024) Aligned {
    unsigned v[4];
};

// What value `i` of launch `launch`'s struct holds.
__host__ __device__ static unsigned value_at(unsigned launch, unsigned i) {
    return launch * 2654435761u + i * 40503u + 17u;
}

// Each kernel checks its own struct: result[launch] is 1 if every value arrived, 2 if one did
// not; where[launch] is the address of its kernarg segment.
struct Out {
    int* result;
    uint64_t* where;
};

template <typename T>
__device__ static void check_struct(Out out, unsigned launch, const T& s) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    int ok = 1;
    for (unsigned i = 0; i < sizeof(s.v) / sizeof(s.v[0]); ++i)
        if (s.v[i] != value_at(launch, i)) ok = 2;
    out.result[launch] = ok;
    out.where[launch] = reinterpret_cast<uint64_t>(__builtin_amdgcn_kernarg_segment_ptr());
}

__global__ void small_kernel(Out out, unsigned launch) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    out.result[launch] = 1;
    out.where[launch] = reinterpret_cast<uint64_t>(__builtin_amdgcn_kernarg_segment_ptr());
}
__global__ void edge_kernel(Out out, unsigned launch, Edge s) { check_struct(out, launch, s); }
__global__ void medium_kernel(Out out, unsigned launch, Medium s) { check_struct(out, launch, s); }
__global__ void big_kernel(Out out, unsigned launch, Big s) { check_struct(out, launch, s); }
__global__ void aligned_kernel(Out out, unsigned launch, Aligned s) { check_struct(out, launch, s); }

enum Kind { SMALL, EDGE, MEDIUM, BIG, ALIGNED, KINDS };

template <typename T>
static T filled(unsigned launch) {
    T s;
    for (unsigned i = 0; i < sizeof(s.v) / sizeof(s.v[0]); ++i) s.v[i] = value_at(launch, i);
    return s;
}

// Launches kernel `kind` as launch number `launch`.
static void launch_kind(Kind kind, Out out, unsigned launch, hipStream_t stream) {
    switch (kind) {
        case SMALL:
            small_kernel<<<1, 64, 0, stream>>>(out, launch);
            break;
        case EDGE:
            edge_kernel<<<1, 64, 0, stream>>>(out, launch, filled<Edge>(launch));
            break;
        case MEDIUM:
            medium_kernel<<<1, 64, 0, stream>>>(out, launch, filled<Medium>(launch));
            break;
        case BIG:
            big_kernel<<<1, 64, 0, stream>>>(out, launch, filled<Big>(launch));
            break;
        default:
            aligned_kernel<<<1, 64, 0, stream>>>(out, launch, filled<Aligned>(launch));
            break;
    }
}

static const uint64_t ALIGNMENT[KINDS] = {8, 8, 8, 8, 1024};

// A pattern of kinds that makes small and large launches follow one another in every order.
static Kind kind_of(unsigned launch) {
    static const Kind pattern[] = {SMALL, BIG, SMALL, SMALL, EDGE, MEDIUM, ALIGNED,
                                   SMALL, MEDIUM, BIG, BIG, EDGE, SMALL};
    return pattern[launch % (sizeof pattern / sizeof pattern[0])];
}

// More launches than a queue has kernarg slots of a kind (twice its 1024 packets).
constexpr unsigned LAUNCHES = 2600;
// Launches per graph (each graph launch is one more of each).
constexpr unsigned GRAPH_NODES = 5;
constexpr unsigned GRAPH_LAUNCHES = 6;
constexpr unsigned DENSE = 16;
constexpr unsigned TOTAL = LAUNCHES + GRAPH_NODES * GRAPH_LAUNCHES + DENSE;

int main() {
    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
    Out out;
    CHECK(hipMalloc(&out.result, TOTAL * sizeof(int)));
    CHECK(hipMalloc(&out.where, TOTAL * sizeof(uint64_t)));
    CHECK(hipMemset(out.result, 0, TOTAL * sizeof(int)));
    std::vector<Kind> kinds(TOTAL, SMALL);

    // Graphs of one node of each kind, each for its own launch numbers (the node keeps a copy
    // of its arguments); launched between the direct launches below, each graph once.
    std::vector<hipGraphExec_t> graphs;
    for (unsigned g = 0; g < GRAPH_LAUNCHES; ++g) {
        hipGraph_t graph;
        CHECK(hipGraphCreate(&graph, 0));
        for (unsigned n = 0; n < GRAPH_NODES; ++n) {
            unsigned launch = LAUNCHES + g * GRAPH_NODES + n;
            Kind kind = static_cast<Kind>(n);
            kinds[launch] = kind;
            Edge edge = filled<Edge>(launch);
            Medium medium = filled<Medium>(launch);
            Big big = filled<Big>(launch);
            Aligned aligned = filled<Aligned>(launch);
            void* args[] = {&out, &launch, nullptr};
            const void* func = reinterpret_cast<const void*>(&small_kernel);
            switch (kind) {
                case EDGE: args[2] = &edge; func = reinterpret_cast<const void*>(&edge_kernel); break;
                case MEDIUM: args[2] = &medium; func = reinterpret_cast<const void*>(&medium_kernel); break;
                case BIG: args[2] = &big; func = reinterpret_cast<const void*>(&big_kernel); break;
                case ALIGNED: args[2] = &aligned; func = reinterpret_cast<const void*>(&aligned_kernel); break;
                default: break;
            }
            hipKernelNodeParams p = {};
            p.func = const_cast<void*>(func);
            p.gridDim = dim3(1);
            p.blockDim = dim3(64);
            p.kernelParams = args;
            hipGraphNode_t node;
            CHECK(hipGraphAddKernelNode(&node, graph, nullptr, 0, &p));
        }
        hipGraphExec_t exec;
        CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
        CHECK(hipGraphDestroy(graph));
        graphs.push_back(exec);
    }

    for (unsigned launch = 0; launch < LAUNCHES; ++launch) {
        kinds[launch] = kind_of(launch);
        launch_kind(kinds[launch], out, launch, stream);
        if (launch % (LAUNCHES / GRAPH_LAUNCHES) == 7 && launch / (LAUNCHES / GRAPH_LAUNCHES) < GRAPH_LAUNCHES)
            CHECK(hipGraphLaunch(graphs[launch / (LAUNCHES / GRAPH_LAUNCHES)], stream));
    }
    CHECK(hipGetLastError());
    CHECK(hipStreamSynchronize(stream));

    // Back to back small launches on an idle stream: their segments fill a few pages, not
    // one page each.
    for (unsigned i = 0; i < DENSE; ++i) {
        unsigned launch = LAUNCHES + GRAPH_NODES * GRAPH_LAUNCHES + i;
        kinds[launch] = SMALL;
        launch_kind(SMALL, out, launch, stream);
    }
    CHECK(hipStreamSynchronize(stream));

    std::vector<int> result(TOTAL);
    std::vector<uint64_t> where(TOTAL);
    CHECK(hipMemcpy(result.data(), out.result, TOTAL * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(where.data(), out.where, TOTAL * sizeof(uint64_t), hipMemcpyDeviceToHost));
    int missing = 0, corrupt = 0, misaligned = 0;
    for (unsigned launch = 0; launch < TOTAL; ++launch) {
        if (result[launch] == 0 && missing++ < 5)
            std::fprintf(stderr, "launch %u (kind %d) did not run\n", launch, kinds[launch]);
        if (result[launch] == 2 && corrupt++ < 5)
            std::fprintf(stderr, "launch %u (kind %d) got corrupted arguments\n", launch, kinds[launch]);
        if (where[launch] % ALIGNMENT[kinds[launch]] != 0 && misaligned++ < 5)
            std::fprintf(stderr, "launch %u (kind %d): kernarg segment at %#llx\n", launch,
                         kinds[launch], static_cast<unsigned long long>(where[launch]));
    }
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(corrupt, 0);
    EXPECT_EQ(misaligned, 0);

    // Sixteen 272-byte segments in 512-byte slots span two pages, three where the region
    // wraps; a page per launch would be sixteen.
    std::vector<uint64_t> pages;
    for (unsigned i = 0; i < DENSE; ++i) {
        uint64_t page = where[LAUNCHES + GRAPH_NODES * GRAPH_LAUNCHES + i] / 4096;
        bool seen = false;
        for (uint64_t p : pages) seen |= p == page;
        if (!seen) pages.push_back(page);
    }
    if (pages.size() > 3)
        std::fprintf(stderr, "%d back-to-back small launches used %d pages of kernarg memory\n",
                     DENSE, static_cast<int>(pages.size()));
    EXPECT_TRUE(pages.size() <= 3);

    for (hipGraphExec_t exec : graphs) CHECK(hipGraphExecDestroy(exec));
    CHECK(hipFree(out.result));
    CHECK(hipFree(out.where));
    CHECK(hipStreamDestroy(stream));
    return finish("kernarg_slots");
}
