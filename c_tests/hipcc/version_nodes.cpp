// version_nodes: built by Debian's hipcc (ROCm 5.2 headers), this program
// imports one function from each GNU version node of libamdhip64.so.5
// (hip_4.2 ... hip_5.2). ld.so refuses to start it unless the library it loads
// defines every one of those nodes; the functions beyond hip_4.2 are only
// referenced, never called (lazy binding resolves them on first call).
#include <hip/hip_runtime.h>

#include <cstdio>

// The _spt ("per-thread default stream") entry points have no declaration in
// the 5.2 headers unless per-thread mode is on; declare the one we reference.
extern "C" hipError_t hipMemcpy_spt(void* dst, const void* src, size_t size, hipMemcpyKind kind);

int main(int argc, char** argv) {
    (void)argv;
    int count = -1;
    hipError_t err = hipGetDeviceCount(&count); // hip_4.2
    if (argc > 1000) {
        // Never runs: these exist only to be imported.
        hipGraph_t graph;
        (void)hipGraphCreate(&graph, 0);                                // hip_4.3
        hipGraphNode_t node;
        (void)hipGraphAddEmptyNode(&node, graph, nullptr, 0);            // hip_4.4
        (void)hipStreamGetCaptureInfo(nullptr, nullptr, nullptr);       // hip_4.5
        (void)hipPointerGetAttribute(nullptr, HIP_POINTER_ATTRIBUTE_CONTEXT, nullptr); // hip_5.0
        hipUUID uuid;
        (void)hipDeviceGetUuid(&uuid, 0);                               // hip_5.1
        (void)hipMemcpy_spt(nullptr, nullptr, 0, hipMemcpyHostToHost); // hip_5.2
    }
    std::printf("version_nodes: started, hipGetDeviceCount -> %d, %d device(s)\n",
                static_cast<int>(err), count);
    return 0;
}
