#!/usr/bin/env python3
"""Shrinks a one-thread api_fuzz replay that fails, keeping the failure's kind.

    tests/api_fuzz/shrink.py FILE.replay KIND OUT.replay

KIND is a text the failing child prints (e.g. WATCHDOG, "returned 700"). Needs the test
binary built (cargo test -p hipshim --test api_fuzz --no-run). Each try runs the child with
a 5 s watchdog; ddmin over chunks of operations, the last operation kept.
"""
import glob, os, subprocess, sys

src, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
exe = max(glob.glob(f"{root}/target/debug/deps/api_fuzz-*[!.d]"), key=os.path.getmtime)
kernels = max(glob.glob(f"{root}/target/c_tests/api_fuzz_kernels-gfx942.co-*"), key=os.path.getmtime)
head, ops = [], []
for line in open(src):
    (ops if line.startswith("T0 ") else head).append(line)
tmp = out + ".try"

def fails(cand):
    with open(tmp, "w") as f:
        f.writelines(head + cand)
    env = dict(os.environ, HIPSHIM_API_FUZZ_CHILD=tmp, HIPSHIM_API_FUZZ_LIB_DIR=f"{root}/target/debug/hipshim-lib",
               HIPSHIM_API_FUZZ_KERNELS=kernels, HIPSHIM_DEVICE="sim", HSASIM_GFX="gfx942",
               HIPSHIM_LOG="off", HIPSHIM_API_FUZZ_WATCHDOG_SECS="5", RUST_BACKTRACE="0")
    p = subprocess.run([exe, "--exact", "api_fuzz_child", "--nocapture"], env=env,
                       capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    return kind in text and "a fuzzer thread panicked" not in text

assert fails(ops), "the file does not fail that way"
n = 2
while len(ops) >= 2:
    chunk = max(1, len(ops) // n)
    done = False
    for i in range(0, len(ops) - 1, chunk):
        cand = ops[:i] + ops[i + chunk:]
        if cand and cand[-1] == ops[-1] and fails(cand):
            ops, n, done = cand, max(n - 1, 2), True
            print(f"{len(ops)} ops", flush=True)
            break
    if not done:
        if chunk == 1:
            break
        n = min(len(ops), n * 2)
with open(out, "w") as f:
    f.writelines(head + ops)
os.remove(tmp)
print(f"kept {len(ops)} ops in {out}")
