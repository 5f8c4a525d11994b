#!/usr/bin/env python3
"""`hrry.torch.load_file` against `safetensors.torch.load_file`, in one run, on the
same tensors.

Builds a LLaMA-like set of bfloat16 tensors (--size-mib, 512 by default; float32
norms), saves it with `safetensors.torch.save_file` and with `hrry.torch.save_file`,
then, files in the page cache for both, times (best of --repeat, the two sides in
turns):

  1. load:                 `load_file(path)`
  2. load + read:          `load_file(path)`, then every byte of every tensor read
                           (the largest byte of each; the same work on both sides)

and prints each time and the ratio safetensors / hrry (above 1: hrry is faster).
Peak resident memory (VmHWM) of each side is measured in a fresh process doing the
load, then the load and read, so that neither sees the other's pages.

Needs torch, safetensors and hrry installed; `python/run_tests.sh` makes a venv with
them. From the repository root:

    target/py-hrry/venv/bin/python python/bench/torch_bench.py [--size-mib 512] [--repeat 5] [--dir DIR]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import torch

import hrry.torch
import safetensors.torch

from bench import llama_like


def model(size_mib, seed=0):
    """A LLaMA-like set of bfloat16 tensors of about `size_mib` MiB (`bench.llama_like`)."""
    g = torch.Generator().manual_seed(seed)

    def w(*shape):
        return (torch.randn(shape, generator=g) * 0.02).to(torch.bfloat16)

    return llama_like(size_mib, w, torch.ones)


LOADERS = {"hrry": hrry.torch.load_file, "safetensors": safetensors.torch.load_file}


def read_all(tensors):
    """Reads every byte of every tensor (the largest byte of each: no temporary
    the size of the tensor); returns their sum."""
    return sum(int(t.reshape(-1).view(torch.uint8).max()) for t in tensors.values())


def load(side, path):
    return LOADERS[side](path)


def load_and_read(side, path):
    return read_all(LOADERS[side](path))


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def peak_rss(side, path, read):
    """VmHWM (bytes) of a fresh process that loads `path` with `side` (and reads
    every tensor when `read`), and the same process's VmHWM before loading."""
    code = f"""
import json, sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import torch_bench
def hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
before = hwm()
result = (torch_bench.load_and_read if {read!r} else torch_bench.load)({side!r}, {path!r})
print(json.dumps([before, hwm()]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def mib(n):
    return f"{n / 2**20:8.1f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", help="where to write the files (default: a temporary directory)")
    args = parser.parse_args()

    work = args.dir or tempfile.mkdtemp(prefix="hrry-torch-bench-")
    try:
        tensors = model(args.size_mib)
        paths = {"hrry": os.path.join(work, "model.hrry"), "safetensors": os.path.join(work, "model.safetensors")}
        hrry.torch.save_file(tensors, paths["hrry"])
        safetensors.torch.save_file(tensors, paths["safetensors"])
        want = read_all(tensors)
        size = sum(t.numel() * t.element_size() for t in tensors.values())
        del tensors
        print(f"{size / 2**20:.0f} MiB in {len(LOADERS)} files of the same tensors (bfloat16, float32 norms);"
              f" torch {torch.__version__}, safetensors {safetensors.__version__}")

        for side in LOADERS:  # page cache warm for both, checksums equal
            assert load_and_read(side, paths[side]) == want, side

        rows = [("load", load), ("load + read every tensor", load_and_read)]
        print(f"{'':28} {'hrry':>10} {'safetensors':>12} {'ratio':>7}   (best of {args.repeat}; ratio = safetensors / hrry)")
        for label, fn in rows:
            best = {side: float("inf") for side in LOADERS}
            for _ in range(args.repeat):
                for side in LOADERS:
                    seconds, result = timed(fn, side, paths[side])
                    if fn is load_and_read:
                        assert result == want
                    best[side] = min(best[side], seconds)
                    del result
            ratio = best["safetensors"] / best["hrry"]
            print(f"{label:28} {best['hrry'] * 1e3:8.2f}ms {best['safetensors'] * 1e3:10.2f}ms {ratio:6.2f}x")

        print("peak resident memory (VmHWM) of a fresh process, growth over its start:")
        for label, read in (("load", False), ("load + read every tensor", True)):
            grown = {}
            for side in LOADERS:
                before, after = peak_rss(side, paths[side], read)
                grown[side] = after - before
            print(f"  {label:26} hrry {mib(grown['hrry'])}   safetensors {mib(grown['safetensors'])}")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
