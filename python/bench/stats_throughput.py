"""Statistics throughput: `hrry inspect --stats` against NumPy on the same tensors.

Writes a safetensors file and its HRRYFILE conversion (three float32 tensors and
one bfloat16 tensor of 4096 x 4096, 224 MiB stored) under target/stats-bench/,
then times `hrry inspect --stats --json` on each against NumPy computing the same
statistics (min, max, mean and std of the finite values, NaN, Inf and zero counts)
over the file's arrays mapped from disk (warm page cache for both; best of three).
Prints seconds, GB/s of stored bytes and the ratio, after checking the values agree.
Usage: python python/bench/stats_throughput.py [HRRY_BINARY]
"""

import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HRRY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "hrry")
OUT = os.path.join(ROOT, "target", "stats-bench")


def write_safetensors(path, tensors):
    header, offset = {}, 0
    for name, (dtype, a) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h)
        for _, a in tensors.values():
            f.write(np.ascontiguousarray(a).tobytes())


def numpy_stats(a):
    finite = np.isfinite(a)
    nan = int(np.isnan(a).sum())
    inf = int(a.size - finite.sum() - nan)
    v = a[finite] if nan or inf else a
    return {
        "min": float(v.min()),
        "max": float(v.max()),
        "mean": float(v.mean(dtype=np.float64)),
        "std": float(v.std(dtype=np.float64)),
        "nan": nan,
        "inf": inf,
        "zeros": int(v.size - np.count_nonzero(v)),
    }


def best_of(n, f):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)
    tensors = {}
    for i in range(3):
        tensors[f"blk.{i}.f32"] = ("F32", rng.standard_normal((4096, 4096), dtype=np.float32))
    bf = rng.standard_normal((4096, 4096), dtype=np.float32)
    tensors["blk.3.bf16"] = ("BF16", (bf.view(np.uint32) >> 16).astype(np.uint16))
    st = os.path.join(OUT, "bench.safetensors")
    hr = os.path.join(OUT, "bench.hrry")
    write_safetensors(st, tensors)
    subprocess.run([HRRY, "convert", st, hr], check=True, capture_output=True)
    stored = sum(a.nbytes for _, a in tensors.values())
    header_len = int.from_bytes(open(st, "rb").read(8), "little")
    meta = json.loads(open(st, "rb").read(8 + header_len)[8:])
    mm = np.memmap(st, dtype=np.uint8, mode="r")

    def run_numpy():
        out = {}
        for name, info in meta.items():
            s, e = info["data_offsets"]
            raw = mm[8 + header_len + s : 8 + header_len + e]
            if info["dtype"] == "BF16":
                # NumPy has no bfloat16: widened to float32 first.
                a = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            else:
                a = raw.view(np.float32)
            out[name] = numpy_stats(a)
        return out

    def run_hrry(path):
        done = subprocess.run([HRRY, "inspect", "--stats", "--json", path], check=True, capture_output=True)
        return json.loads(done.stdout)

    run_hrry(st), run_hrry(hr), run_numpy()  # warm the page cache
    best = {}
    best["hrry (safetensors)"], doc = best_of(3, lambda: run_hrry(st))
    best["hrry (hrryfile)"], doc_h = best_of(3, lambda: run_hrry(hr))
    best["numpy"], ours = best_of(3, run_numpy)
    for d in (doc, doc_h):
        for t in d["tensors"]:
            want, got = ours[t["name"]], t["stats"]
            assert got["min"] == want["min"] and got["max"] == want["max"], (t["name"], got, want)
            assert abs(got["mean"] - want["mean"]) < 1e-9 and abs(got["std"] - want["std"]) < 1e-9
            assert (got["nan"], got["inf"], got["zeros"]) == (want["nan"], want["inf"], want["zeros"])
    gb = stored / 1e9
    print(f"{stored / (1 << 20):.0f} MiB stored, {len(tensors)} tensors")
    for label, secs in best.items():
        print(f"{label:20} {secs:7.3f} s  {gb / secs:6.2f} GB/s of stored values")
    for label in ("hrry (safetensors)", "hrry (hrryfile)"):
        print(f"{label} / numpy: {best[label] / best['numpy']:.2f}x numpy's time")


if __name__ == "__main__":
    main()
