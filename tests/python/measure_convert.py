#!/usr/bin/env python3
"""Measures `hrry convert` on a ~1 GiB GGUF: peak memory and time against `cp`.

Usage: measure_convert.py HRRY_BINARY WORK_DIR [RUNS]

Writes WORK_DIR/big.gguf with `gguf.GGUFWriter` (a llama-like set of Q8_0, Q4_0,
F16 and F32 tensors; the largest is a 250 MiB F16 `output.weight`), then runs
`/usr/bin/time -v hrry convert big.gguf big.hrry` and `cp big.gguf copy.gguf`
(then `sync copy.gguf`, since the conversion syncs its output before renaming it)
RUNS times each (alternating, page cache warm) and prints the peak resident set
of the conversion, the largest tensor, and the median times and their ratios.
"""

import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter
from gguf.constants import GGML_QUANT_SIZES

hrry, work = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.makedirs(work, exist_ok=True)
src = os.path.join(work, "big.gguf")
rng = np.random.default_rng(1)


def blocks(qt, rows, cols):
    """Random blocks of `qt` with finite float16 scales (first two bytes)."""
    block, size = GGML_QUANT_SIZES[qt]
    b = rng.integers(0, 256, (rows, cols // block, size), dtype=np.uint8)
    scales = rng.uniform(0.001, 0.01, (rows, cols // block)).astype(np.float16)
    b[..., :2] = scales.view(np.uint8).reshape(rows, cols // block, 2)
    return b.reshape(rows, cols // block * size)


largest = 0
if not os.path.exists(src):
    w = GGUFWriter(src, arch="llama")
    w.add_uint32("llama.block_count", 8)
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(32000)])
    w.add_tensor("token_embd.weight", blocks(Q.Q8_0, 32000, 4096), raw_dtype=Q.Q8_0)
    for layer in range(8):
        p = f"blk.{layer}."
        w.add_tensor(p + "attn_norm.weight", np.ones(4096, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", blocks(Q.Q4_0, 4096, 4096), raw_dtype=Q.Q4_0)
        w.add_tensor(p + "ffn_up.weight", blocks(Q.Q8_0, 11008, 4096), raw_dtype=Q.Q8_0)
        w.add_tensor(p + "ffn_down.weight", blocks(Q.Q4_0, 4096, 11008), raw_dtype=Q.Q4_0)
    w.add_tensor("output.weight", rng.standard_normal((32000, 4096), dtype=np.float32).astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
largest = 32000 * 4096 * 2
size = os.path.getsize(src)
print(f"input: {src}, {size} bytes ({size / 2**30:.3f} GiB); largest tensor {largest / 2**20:.0f} MiB")

dst = os.path.join(work, "big.hrry")
copy = os.path.join(work, "copy.gguf")
subprocess.run(["cp", src, copy], check=True)  # warm the page cache
convert_times, cp_times, cp_sync_times, peaks = [], [], [], []
for _ in range(runs):
    # Like `cp` below, the conversion writes a new file rather than replacing one
    # (deleting the previous 1 GiB output is not part of either measurement).
    if os.path.exists(dst):
        os.remove(dst)
    start = time.perf_counter()
    p = subprocess.run(
        ["/usr/bin/time", "-v", hrry, "convert", "--quiet", src, dst],
        capture_output=True, text=True, check=True,
    )
    convert_times.append(time.perf_counter() - start)
    peaks.append(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)))
    os.remove(copy)
    start = time.perf_counter()
    subprocess.run(["cp", src, copy], check=True)
    cp_times.append(time.perf_counter() - start)
    # hrry convert syncs its output before the rename; the fair baseline syncs too.
    subprocess.run(["sync", copy], check=True)
    cp_sync_times.append(time.perf_counter() - start)
out_size = os.path.getsize(dst)
tc, tp = statistics.median(convert_times), statistics.median(cp_times)
ts = statistics.median(cp_sync_times)
print(f"output: {out_size} bytes")
print(f"peak RSS of hrry convert: {max(peaks) / 1024:.1f} MiB (runs: {[round(k / 1024, 1) for k in peaks]})")
print(f"peak RSS minus largest tensor: {max(peaks) / 1024 - largest / 2**20:.1f} MiB")
print(f"hrry convert median {tc:.2f} s, cp median {tp:.2f} s, ratio {tc / tp:.2f}")
print(f"cp + sync median {ts:.2f} s, ratio {tc / ts:.2f}")
for f in (dst, copy):
    os.remove(f)
