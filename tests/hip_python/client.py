"""AMD's Python bindings (hip-python) driving hipshim: allocation, copies, streams, events, a
module loaded from a code object and launched, and a kernel compiled with hiprtc.

Run by tests/hip_python.rs with the hip-python of scripts/hip-python.sh; argv[1] is a code
object with the kernel `scale(float*, float, int)` for the simulated device's target.
Prints "hip-python: PASSED" or raises.
"""
import ctypes
import array
import sys

from hip import hip, hiprtc


def ok(result):
    """The values of a hip-python call after its status, which must be success."""
    if not isinstance(result, tuple):
        result = (result,)
    status, values = result[0], result[1:]
    good = (hip.hipError_t.hipSuccess, hiprtc.hiprtcResult.HIPRTC_SUCCESS)
    if status not in good:
        raise RuntimeError(f"{status}")
    if len(values) == 1:
        return values[0]
    return values or None


N = 4096
BYTES = N * 4

# The device.
assert ok(hip.hipGetDeviceCount()) >= 1
props = hip.hipDeviceProp_t()
ok(hip.hipGetDeviceProperties(props, 0))
arch = props.gcnArchName.split(b":")[0]
assert arch in (b"gfx942", b"gfx90a"), arch

# Allocation, copies both ways, a fill.
host = array.array("f", [float(i) for i in range(N)])
dev = ok(hip.hipMalloc(BYTES))
ok(hip.hipMemcpy(dev, host, BYTES, hip.hipMemcpyKind.hipMemcpyHostToDevice))
back = array.array("f", [0.0] * N)
ok(hip.hipMemcpy(back, dev, BYTES, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert back == host
ok(hip.hipMemset(dev, 0, BYTES))
ok(hip.hipMemcpy(back, dev, BYTES, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
assert all(v == 0.0 for v in back)

# A stream, events around an async copy.
stream = ok(hip.hipStreamCreate())
start, stop = ok(hip.hipEventCreate()), ok(hip.hipEventCreate())
ok(hip.hipEventRecord(start, stream))
ok(hip.hipMemcpyAsync(dev, host, BYTES, hip.hipMemcpyKind.hipMemcpyHostToDevice, stream))
ok(hip.hipEventRecord(stop, stream))
ok(hip.hipEventSynchronize(stop))
assert ok(hip.hipEventElapsedTime(start, stop)) >= 0.0
ok(hip.hipStreamSynchronize(stream))


def launch_scale(module, factor):
    kernel = ok(hip.hipModuleGetFunction(module, b"scale"))
    ok(hip.hipModuleLaunchKernel(
        kernel, N // 256, 1, 1, 256, 1, 1,
        sharedMemBytes=0, stream=stream, kernelParams=None,
        extra=(dev, ctypes.c_float(factor), ctypes.c_int(N))))
    ok(hip.hipStreamSynchronize(stream))
    ok(hip.hipMemcpy(back, dev, BYTES, hip.hipMemcpyKind.hipMemcpyDeviceToHost))


# A module from a code object built ahead.
with open(sys.argv[1], "rb") as f:
    code = f.read()
module = ok(hip.hipModuleLoadData(code))
launch_scale(module, 3.0)
assert back == array.array("f", [3.0 * i for i in range(N)]), back[:4]
ok(hip.hipModuleUnload(module))

# The same kernel compiled at run time.
source = b"""
extern "C" __global__ void scale(float* p, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= factor;
}
"""
prog = ok(hiprtc.hiprtcCreateProgram(source, b"scale.hip", 0, [], []))
flags = [b"--offload-arch=" + arch]
status = hiprtc.hiprtcCompileProgram(prog, len(flags), flags)
if status[0] != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
    size = ok(hiprtc.hiprtcGetProgramLogSize(prog))
    log = bytearray(size)
    hiprtc.hiprtcGetProgramLog(prog, log)
    raise RuntimeError(f"hiprtc: {status[0]}: {bytes(log).decode(errors='replace')}")
size = ok(hiprtc.hiprtcGetCodeSize(prog))
code = bytearray(size)
ok(hiprtc.hiprtcGetCode(prog, code))
ok(hiprtc.hiprtcDestroyProgram(prog.createRef()))
module = ok(hip.hipModuleLoadData(code))
launch_scale(module, 0.5)
assert back == array.array("f", [1.5 * i for i in range(N)]), back[:4]
ok(hip.hipModuleUnload(module))

for e in (start, stop):
    ok(hip.hipEventDestroy(e))
ok(hip.hipStreamDestroy(stream))
ok(hip.hipFree(dev))
print("hip-python: PASSED")
