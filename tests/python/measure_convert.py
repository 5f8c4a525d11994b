#!/usr/bin/env python3
"""Measures `hrry convert` on large files: peak memory and time against `cp` + `sync`.

Usage: measure_convert.py HRRY_BINARY WORK_DIR [RUNS]

A manual benchmark (it writes several GiB; CI does not run it). Inputs, written once
into WORK_DIR and reused:

- big.gguf (about 1.3 GiB, by `gguf.GGUFWriter`): a 544 MiB Q8_0 token embedding,
  a 512 MiB F16 output matrix, and llama-like layers of Q4_0, Q8_0 and F32 tensors.
- big.safetensors (about 1.1 GiB, by `safetensors.numpy.save_file`): a 512 MiB F16
  embedding, F32, BF16-sized and I64 tensors.

For each direction -- GGUF -> HRRYFILE, safetensors -> HRRYFILE, and back (HRRYFILE
-> GGUF, HRRYFILE -> safetensors) -- it runs the conversion and `cp INPUT COPY;
sync COPY` RUNS times, alternating, page cache warm (the conversion syncs its output
before renaming it, so the fair baseline syncs too), and prints the peak resident
set of the conversion (from GNU time), the input and output sizes, the largest
tensor, the median times and their ratio, and the conversion's CPU time with the
load average (the ratio is only as quiet as the machine). Targets: peak RSS <= 64 MiB whatever the tensor
size, time <= 1.2x cp + sync.
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter
from gguf.constants import GGML_QUANT_SIZES
from safetensors.numpy import save_file

hrry, work = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(1)
MiB = 2**20


def blocks(qt, rows, cols):
    """Random blocks of `qt` with finite float16 scales (first two bytes)."""
    block, size = GGML_QUANT_SIZES[qt]
    b = rng.integers(0, 256, (rows, cols // block, size), dtype=np.uint8)
    scales = rng.uniform(0.001, 0.01, (rows, cols // block)).astype(np.float16)
    b[..., :2] = scales.view(np.uint8).reshape(rows, cols // block, 2)
    return b.reshape(rows, cols // block * size)


def f16(rows, cols):
    return rng.integers(0, 0x7BFF, (rows, cols), dtype=np.uint16).view(np.float16)


gguf_path = os.path.join(work, "big.gguf")
gguf_largest = 131072 * 4096 // 32 * 34
if not os.path.exists(gguf_path):
    w = GGUFWriter(gguf_path, arch="llama")
    w.add_uint32("llama.block_count", 4)
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(131072)])
    w.add_tensor("token_embd.weight", blocks(Q.Q8_0, 131072, 4096), raw_dtype=Q.Q8_0)
    for layer in range(4):
        p = f"blk.{layer}."
        w.add_tensor(p + "attn_norm.weight", np.ones(4096, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", blocks(Q.Q4_0, 4096, 4096), raw_dtype=Q.Q4_0)
        w.add_tensor(p + "ffn_up.weight", blocks(Q.Q8_0, 11008, 4096), raw_dtype=Q.Q8_0)
        w.add_tensor(p + "ffn_down.weight", blocks(Q.Q4_0, 4096, 11008), raw_dtype=Q.Q4_0)
    w.add_tensor("output.weight", f16(65536, 4096))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

st_path = os.path.join(work, "big.safetensors")
st_largest = 65536 * 4096 * 2
if not os.path.exists(st_path):
    tensors = {"model.embed_tokens.weight": f16(65536, 4096)}
    for layer in range(4):
        p = f"model.layers.{layer}."
        tensors[p + "mlp.up_proj.weight"] = f16(11008, 4096)
        tensors[p + "self_attn.q_proj.weight"] = rng.standard_normal((2048, 4096), dtype=np.float32)
        tensors[p + "input_layernorm.weight"] = np.ones(4096, dtype=np.float32)
    tensors["model.positions"] = np.arange(65536, dtype=np.int64)
    save_file(tensors, st_path, metadata={"format": "pt"})
    del tensors


def run(argv):
    """Runs argv; returns (seconds, peak RSS in KiB, CPU seconds) of that one process.

    The peak comes from GNU time: a child forked from this (large) Python process
    would carry its resident set into its own maximum up to the exec, whereas
    `time` is small."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {p.stderr}")
    rss, user, system = p.stderr.strip().splitlines()[-1].split()
    return elapsed, int(rss), float(user) + float(system)


def measure(label, src, dst, largest):
    copy = dst + ".cp"
    subprocess.run(["cat", src], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    convert_times, baseline_times, peaks, cpu = [], [], [], []
    for _ in range(runs):
        # Both sides write a new file (removing the previous one is not measured).
        for f in (dst, copy):
            if os.path.exists(f):
                os.remove(f)
        t, peak, c = run([hrry, "convert", "--quiet", src, dst])
        convert_times.append(t)
        peaks.append(peak)
        cpu.append(c)
        start = time.perf_counter()
        subprocess.run(["cp", src, copy], check=True)
        subprocess.run(["sync", copy], check=True)
        baseline_times.append(time.perf_counter() - start)
    tc, tb = statistics.median(convert_times), statistics.median(baseline_times)
    print(f"{label}:")
    print(f"  input {os.path.getsize(src) / MiB:.1f} MiB, output {os.path.getsize(dst) / MiB:.1f} MiB, "
          f"largest tensor {largest / MiB:.1f} MiB")
    print(f"  peak RSS {max(peaks) / 1024:.1f} MiB (runs: {[round(k / 1024, 1) for k in peaks]})")
    print(f"  hrry convert median {tc:.2f} s, cp + sync median {tb:.2f} s, ratio {tc / tb:.2f} "
          f"(runs: {[round(t, 2) for t in convert_times]} vs {[round(t, 2) for t in baseline_times]})")
    print(f"  hrry convert CPU (user + system) median {statistics.median(cpu):.2f} s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    os.remove(copy)
    return dst


print(f"{runs} runs each, page cache warm, medians")
gguf_hrry = measure("GGUF -> HRRYFILE", gguf_path, os.path.join(work, "from-gguf.hrry"), gguf_largest)
st_hrry = measure("safetensors -> HRRYFILE", st_path, os.path.join(work, "from-st.hrry"), st_largest)
out = measure("HRRYFILE -> GGUF", gguf_hrry, os.path.join(work, "back.gguf"), gguf_largest)
os.remove(out)
out = measure("HRRYFILE -> safetensors", st_hrry, os.path.join(work, "back.safetensors"), st_largest)
os.remove(out)
for f in (gguf_hrry, st_hrry):
    os.remove(f)
