// stream_attributes: hipStreamSetAttribute / hipStreamGetAttribute / hipStreamCopyAttributes
// (the synchronization policy, set and read; the priority, read) and hipEventRecordWithFlags
// (default, and external inside a capture, where it becomes an event record node).
#include <hip/hip_runtime.h>

#include "../check.h"

__global__ void add(int* data, int value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += value;
}

static void attributes() {
    hipStream_t s, t, low;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamCreate(&t));
    int least = 0, greatest = 0;
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(hipStreamCreateWithPriority(&low, 0, greatest));

    hipStreamAttrValue value{};
    EXPECT_OK(hipStreamGetAttribute(s, hipStreamAttributeSynchronizationPolicy, &value));
    EXPECT_EQ(value.syncPolicy, hipSyncPolicyAuto);
    const hipSynchronizationPolicy policies[] = {hipSyncPolicySpin, hipSyncPolicyYield,
                                                 hipSyncPolicyBlockingSync, hipSyncPolicyAuto};
    for (hipSynchronizationPolicy policy : policies) {
        hipStreamAttrValue in{}, out{};
        in.syncPolicy = policy;
        EXPECT_OK(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &in));
        EXPECT_OK(hipStreamGetAttribute(s, hipStreamAttributeSynchronizationPolicy, &out));
        EXPECT_EQ(out.syncPolicy, policy);
    }
    hipStreamAttrValue priority{};
    EXPECT_OK(hipStreamGetAttribute(low, hipStreamAttributePriority, &priority));
    EXPECT_EQ(priority.priority, greatest);

    // The null stream has attributes too.
    hipStreamAttrValue null_value{};
    EXPECT_OK(hipStreamGetAttribute(nullptr, hipStreamAttributeSynchronizationPolicy, &null_value));
    EXPECT_EQ(null_value.syncPolicy, hipSyncPolicyAuto);

    // Copy: the policy goes from src to dst.
    hipStreamAttrValue blocking{};
    blocking.syncPolicy = hipSyncPolicyBlockingSync;
    EXPECT_OK(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &blocking));
    EXPECT_OK(hipStreamCopyAttributes(t, s));
    hipStreamAttrValue copied{};
    EXPECT_OK(hipStreamGetAttribute(t, hipStreamAttributeSynchronizationPolicy, &copied));
    EXPECT_EQ(copied.syncPolicy, hipSyncPolicyBlockingSync);

    // A stream that sleeps at once when waited for still waits for all of its work.
    const int n = 4096;
    int* data;
    CHECK(hipMalloc(&data, n * sizeof(int)));
    CHECK(hipMemset(data, 0, n * sizeof(int)));
    for (int round = 0; round < 8; ++round) add<<<n / 256, 256, 0, s>>>(data, round, n);
    EXPECT_OK(hipStreamSynchronize(s));
    int host[n];
    CHECK(hipMemcpy(host, data, sizeof(host), hipMemcpyDeviceToHost));
    bool right = true;
    for (int i = 0; i < n; ++i) right = right && host[i] == 28;
    EXPECT_TRUE(right);

    // Bad input.
    hipStreamAttrValue bad{};
    bad.syncPolicy = static_cast<hipSynchronizationPolicy>(0);
    EXPECT_ERR(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &bad),
               hipErrorInvalidValue);
    bad.syncPolicy = static_cast<hipSynchronizationPolicy>(5);
    EXPECT_ERR(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, &bad),
               hipErrorInvalidValue);
    EXPECT_ERR(hipStreamSetAttribute(s, hipStreamAttributeSynchronizationPolicy, nullptr),
               hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetAttribute(s, hipStreamAttributeSynchronizationPolicy, nullptr),
               hipErrorInvalidValue);
    // Only the policy can be set; the priority only read; other ids are neither.
    EXPECT_ERR(hipStreamSetAttribute(s, hipStreamAttributePriority, &priority),
               hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetAttribute(s, static_cast<hipStreamAttrID>(-1), &value),
               hipErrorInvalidValue);
    EXPECT_ERR(hipStreamGetAttribute(s, hipLaunchAttributeCooperative, &value),
               hipErrorInvalidValue);
    // Not while the stream captures.
    CHECK(hipStreamBeginCapture(t, hipStreamCaptureModeThreadLocal));
    EXPECT_ERR(hipStreamSetAttribute(t, hipStreamAttributeSynchronizationPolicy, &blocking),
               hipErrorStreamCaptureUnsupported);
    hipGraph_t graph;
    CHECK(hipStreamEndCapture(t, &graph));
    CHECK(hipGraphDestroy(graph));

    CHECK(hipFree(data));
    CHECK(hipStreamDestroy(s));
    CHECK(hipStreamDestroy(t));
    CHECK(hipStreamDestroy(low));
}

static void record_with_flags() {
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hipEvent_t e;
    CHECK(hipEventCreate(&e));
    int* data;
    CHECK(hipMalloc(&data, 256 * sizeof(int)));
    CHECK(hipMemset(data, 0, 256 * sizeof(int)));

    add<<<1, 256, 0, s>>>(data, 1, 256);
    EXPECT_OK(hipEventRecordWithFlags(e, s, hipEventRecordDefault));
    EXPECT_OK(hipEventSynchronize(e));
    EXPECT_OK(hipEventRecordWithFlags(e, s, hipEventRecordExternal));
    EXPECT_OK(hipEventSynchronize(e));
    EXPECT_ERR(hipEventRecordWithFlags(e, s, 2), hipErrorInvalidValue);

    // External inside a capture: an event record node after the kernel's.
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
    add<<<1, 256, 0, s>>>(data, 2, 256);
    EXPECT_OK(hipEventRecordWithFlags(e, s, hipEventRecordExternal));
    hipGraph_t graph;
    CHECK(hipStreamEndCapture(s, &graph));
    size_t count = 0;
    CHECK(hipGraphGetNodes(graph, nullptr, &count));
    EXPECT_EQ(count, 2);
    hipGraphNode_t nodes[2] = {};
    if (count == 2) {
        CHECK(hipGraphGetNodes(graph, nodes, &count));
        int records = 0;
        for (hipGraphNode_t node : nodes) {
            hipGraphNodeType type;
            CHECK(hipGraphNodeGetType(node, &type));
            records += type == hipGraphNodeTypeEventRecord;
        }
        EXPECT_EQ(records, 1);
    }
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    CHECK(hipGraphLaunch(exec, s));
    EXPECT_OK(hipEventSynchronize(e));
    int host[256];
    CHECK(hipMemcpy(host, data, sizeof(host), hipMemcpyDeviceToHost));
    EXPECT_EQ(host[0], 3);
    EXPECT_EQ(host[255], 3);

    // The default flag inside a capture adds no node (the event marks a point of the capture).
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
    add<<<1, 256, 0, s>>>(data, 2, 256);
    EXPECT_OK(hipEventRecordWithFlags(e, s, hipEventRecordDefault));
    hipGraph_t plain;
    CHECK(hipStreamEndCapture(s, &plain));
    CHECK(hipGraphGetNodes(plain, nullptr, &count));
    EXPECT_EQ(count, 1);

    CHECK(hipGraphExecDestroy(exec));
    CHECK(hipGraphDestroy(graph));
    CHECK(hipGraphDestroy(plain));
    CHECK(hipEventDestroy(e));
    CHECK(hipFree(data));
    CHECK(hipStreamDestroy(s));
}

int main() {
    attributes();
    record_with_flags();
    return finish("stream_attributes");
}
