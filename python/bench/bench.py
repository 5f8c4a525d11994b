#!/usr/bin/env python3
"""Loading speed of the `hrry` package against safetensors and gguf, in one run.

Builds a ~1 GiB model of realistic tensors (a LLaMA-like stack: float16 embeddings,
attention and MLP weights, float32 norms), saves it as a HRRYFILE with
`hrry.save_file` and as safetensors with `safetensors.numpy.save_file`, then times
(best of --repeat, files in the page cache for both):

  1. `hrry.load_file`            vs `safetensors.numpy.load_file`
  2. `hrry.open` + `get_tensor` for every tensor
                                 vs `safe_open(framework="np")` + `get_tensor`
  3. `File.dequantize` of int4 / int8 block-32 tensors (GGUF Q4_0 / Q8_0 converted by
     `hrry convert`; by default of the shapes of a 7B model's attention and MLP
     weights): into a new array (which, called repeatedly, reuses the memory of the
     previous output once it is freed), into a preallocated `out=`, and into a new
     array with that reuse off (`hrry.set_buffer_cache(0)`: fresh memory, whose page
     faults cost more than the dequantization)
                                 vs `gguf.quants.dequantize` on the same blocks
     (outputs checked equal, bit for bit; each case run --repeat times in a row, the
     cases in turns for --rounds rounds, so that all see the same load), after the
     time of filling an array of the output's size, existing and new, as a measure
     of the machine's memory speed

  4. `hrry.open` + `keys()` of a file of --many small tensors
                                 vs `safe_open(framework="np")` + `keys()`

and prints each time and the ratio baseline / hrry (above 1: hrry is faster). Both
sides of row 1 read the whole file into memory of their own (arrays independent of
the file); row 1 also shows both after touching one byte of every page of every
array, and `hrry.load_file(mmap=True)` (views of a private mapping, whose pages are
read on first use) against the same baseline.

Needs numpy, safetensors, gguf and hrry installed, and the `hrry` binary (for
`hrry convert`): $HRRY_BIN, else target/release/hrry. `python/run_tests.sh` makes a
venv with all of them; then, from the repository root:

    target/py-hrry/venv/bin/python python/bench/bench.py [--size-mib 1024] [--repeat 5] [--rounds 3]
        [--dequant-shapes 4096x4096,11008x4096] [--dir DIR]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import hrry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = 4096


def llama_like(size_mib, w, ones):
    """A LLaMA-like set of tensors of about `size_mib` MiB of 2-byte weights: each
    weight matrix made by `w(*shape)`, each norm vector by `ones(n)`."""
    hidden, inter, vocab = 2048, 5632, 32000
    tensors = {"model.embed_tokens.weight": w(vocab, hidden)}
    per_layer = (4 * hidden * hidden + 3 * hidden * inter) * 2
    budget = size_mib * 2**20 - 2 * vocab * hidden * 2
    for i in range(max(1, round(budget / per_layer))):
        p = f"model.layers.{i}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            tensors[p + f"self_attn.{name}.weight"] = w(hidden, hidden)
        tensors[p + "mlp.gate_proj.weight"] = w(inter, hidden)
        tensors[p + "mlp.up_proj.weight"] = w(inter, hidden)
        tensors[p + "mlp.down_proj.weight"] = w(hidden, inter)
        tensors[p + "input_layernorm.weight"] = ones(hidden)
        tensors[p + "post_attention_layernorm.weight"] = ones(hidden)
    tensors["model.norm.weight"] = ones(hidden)
    tensors["lm_head.weight"] = w(vocab, hidden)
    return tensors


def model(size_mib, rng):
    """`llama_like` with float16 weights and float32 norms."""

    def w(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float16)

    return llama_like(size_mib, w, lambda n: np.ones(n, np.float32))


def best(fn, repeat):
    """Best wall time of `repeat` calls of `fn` (the result of the last is returned)."""
    times, result = [], None
    for _ in range(repeat):
        result = None
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def touch(arrays):
    """Reads one byte of every page of every array."""
    total = 0
    for a in arrays:
        flat = a.reshape(-1).view(np.uint8)
        total += int(flat[::PAGE].sum())
    return total


def row(label, ours, theirs):
    ratio = theirs / ours if ours > 0 else float("inf")
    print(f"  {label:<52} hrry {ours * 1e3:9.2f} ms   baseline {theirs * 1e3:9.2f} ms   ratio {ratio:8.1f}x")
    return ratio


def bench_loading(work, size_mib, repeat):
    import safetensors.numpy
    from safetensors import safe_open

    rng = np.random.default_rng(0)
    tensors = model(size_mib, rng)
    nbytes = sum(a.nbytes for a in tensors.values())
    h_path = os.path.join(work, "model.hrry")
    s_path = os.path.join(work, "model.safetensors")
    hrry.save_file(tensors, h_path, metadata={"format": "pt"})
    safetensors.numpy.save_file(tensors, s_path, metadata={"format": "pt"})
    del tensors
    print(f"model: {nbytes / 2**30:.2f} GiB of tensor data; "
          f"{os.path.getsize(h_path) / 2**30:.3f} GiB HRRYFILE, "
          f"{os.path.getsize(s_path) / 2**30:.3f} GiB safetensors")
    # Both files in the page cache before timing.
    for p in (h_path, s_path):
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass

    ours, loaded = best(lambda: hrry.load_file(h_path), repeat)
    theirs, reference = best(lambda: safetensors.numpy.load_file(s_path), repeat)
    assert sorted(loaded) == sorted(reference)
    for k in reference:
        assert loaded[k].dtype == reference[k].dtype and np.array_equal(loaded[k], reference[k])
    del loaded, reference
    results = {"load_file": row("1. load_file", ours, theirs)}
    ours_t, _ = best(lambda: touch(hrry.load_file(h_path).values()), repeat)
    theirs_t, _ = best(lambda: touch(safetensors.numpy.load_file(s_path).values()), repeat)
    results["load_file+touch"] = row("   load_file, then touch every page", ours_t, theirs_t)
    ours_m, _ = best(lambda: touch(hrry.load_file(h_path, mmap=True).values()), repeat)
    results["load_file mmap+touch"] = row("   load_file(mmap=True), then touch every page", ours_m, theirs_t)

    def ours_each():
        with hrry.open(h_path) as f:
            return [f.get_tensor(k) for k in f.keys()]

    def theirs_each():
        with safe_open(s_path, framework="np") as f:
            return [f.get_tensor(k) for k in f.keys()]

    ours, _ = best(ours_each, repeat)
    theirs, _ = best(theirs_each, repeat)
    results["get_tensor"] = row("2. open + get_tensor (every tensor)", ours, theirs)
    return results


def bench_dequant(work, repeat, rounds, hrry_bin, shapes):
    results = {}
    for shape in shapes:
        results.update(bench_dequant_shape(work, repeat, rounds, hrry_bin, shape))
    return results


def bench_dequant_shape(work, repeat, rounds, hrry_bin, shape):
    from gguf import GGMLQuantizationType as Q
    from gguf import GGUFWriter
    from gguf.quants import dequantize, quantize

    rng = np.random.default_rng(1)
    tag = "x".join(map(str, shape))
    g_path = os.path.join(work, f"q-{tag}.gguf")
    h_path = os.path.join(work, f"q-{tag}.hrry")
    w = GGUFWriter(g_path, arch="llama")
    blocks = {}
    for qt in (Q.Q4_0, Q.Q8_0):
        x = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
        blocks[qt] = quantize(x, qt)
        w.add_tensor(qt.name.lower(), blocks[qt], raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    subprocess.run([hrry_bin, "convert", g_path, h_path], check=True, capture_output=True)
    results = {}
    # What writing the output costs at all on this machine, for reading the ratios:
    # filling an existing float32 array of the output's size, and a new one (whose
    # pages the OS must first fault in and zero).
    mib = np.prod(shape) * 4 / 2**20
    dst = np.ones(shape, np.float32)
    fill, _ = best(lambda: dst.fill(1.0), repeat)
    fresh, _ = best(lambda: np.empty(shape, np.float32).fill(1.0), repeat)
    del dst
    print(f"  memory: fill an existing {mib:.0f} MiB float32 array {fill * 1e3:.2f} ms "
          f"({mib / 1024 / fill:.1f} GiB/s); np.empty + fill {fresh * 1e3:.2f} ms")
    with hrry.open(h_path) as f:
        for qt, label in ((Q.Q4_0, "int4"), (Q.Q8_0, "int8")):
            name = qt.name.lower()
            info = f.info(name)["quantization"]
            assert info["scheme"] == "per-block affine" and info["block_size"] == 32
            buf = np.empty(shape, np.float32)

            def fresh():
                # The output cache off: every new array is fresh memory.
                previous = hrry.set_buffer_cache(0)
                try:
                    return f.dequantize(name)
                finally:
                    hrry.set_buffer_cache(previous)

            cases = {
                "new": lambda: f.dequantize(name),
                "out": lambda: f.dequantize(name, out=buf),
                "fresh": fresh,
                "gguf": lambda: dequantize(blocks[qt], qt),
            }
            # Each case `repeat` times in a row (its steady state: a new array reuses
            # the memory the previous one freed), the cases in turns for `rounds`
            # rounds, so that all see the same load; the best time counts.
            times = dict.fromkeys(cases, float("inf"))
            for _ in range(rounds):
                for case, fn in cases.items():
                    times[case] = min(times[case], best(fn, repeat)[0])
            got, want = f.dequantize(name), dequantize(blocks[qt], qt)
            assert got.shape == want.shape and got.tobytes() == want.astype(np.float32).tobytes()
            assert buf.tobytes() == got.tobytes() and fresh().tobytes() == got.tobytes()
            del got, want, buf
            theirs = times["gguf"]
            key = f"{label} {tag}"
            results[key] = row(
                f"3. dequantize {label} block-32 {shape} ({qt.name})", times["new"], theirs
            )
            results[key + " out="] = row(
                "   the same into a preallocated out=", times["out"], theirs
            )
            results[key + " fresh"] = row(
                "   new array, output cache off (fresh memory)", times["fresh"], theirs
            )
    for p in (g_path, h_path):
        os.remove(p)
    return results


def bench_open_many(work, count, repeat):
    """Opening a file of `count` small tensors and listing their names, shapes and
    dtypes: metadata alone, where the cost of checking the file shows."""
    import safetensors.numpy
    from safetensors import safe_open

    shapes = [(4, 8), (16,), (2, 2, 2, 2), (3, 5), (128,)]
    dtypes = [np.float16, np.float32, np.float64, np.uint8, np.int64]
    tensors = {}
    for i in range(count):
        k = i % len(shapes)
        tensors[f"model.layers.{i // len(shapes)}.part{k}"] = np.zeros(shapes[k], dtypes[k])
    h_path = os.path.join(work, "many.hrry")
    s_path = os.path.join(work, "many.safetensors")
    hrry.save_file(tensors, h_path)
    safetensors.numpy.save_file(tensors, s_path)
    del tensors
    print(f"\n{count} small tensors: {os.path.getsize(h_path) / 2**20:.1f} MiB HRRYFILE, "
          f"{os.path.getsize(s_path) / 2**20:.1f} MiB safetensors")

    def ours():
        with hrry.open(h_path) as f:
            return len(f.keys())

    def theirs():
        with safe_open(s_path, framework="np") as f:
            return len(f.keys())

    def ours_meta():
        with hrry.open(h_path) as f:
            return [(k, i["shape"], i["dtype"]) for k in f.keys() for i in [f.info(k)]]

    def theirs_meta():
        with safe_open(s_path, framework="np") as f:
            return [(k, s.get_shape(), s.get_dtype()) for k in f.keys() for s in [f.get_slice(k)]]

    t_ours, n_ours = best(ours, repeat)
    t_theirs, n_theirs = best(theirs, repeat)
    assert n_ours == n_theirs == count
    row("4. open (checked) + keys(), vs safe_open + keys()", t_ours, t_theirs)
    t_ours, _ = best(ours_meta, repeat)
    t_theirs, _ = best(theirs_meta, repeat)
    row("   + every tensor's shape and dtype (info / get_slice)", t_ours, t_theirs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="model size (default 1024)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case; the best counts")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the dequantization cases, taken in turns (default 3)")
    parser.add_argument("--dequant-shapes", default="4096x4096,11008x4096",
                        help="shapes of the dequantized tensors, comma-separated (default: "
                        "a 7B model's attention and MLP matrices, 4096x4096,11008x4096)")
    parser.add_argument("--many", type=int, default=100_000,
                        help="tensors of the many-small-tensors file (default 100000; 0 skips it)")
    parser.add_argument("--dir", help="where to write the files (default: a temporary folder)")
    args = parser.parse_args()
    hrry_bin = os.environ.get("HRRY_BIN") or os.path.join(ROOT, "target", "release", "hrry")
    if not os.path.exists(hrry_bin):
        sys.exit(f"{hrry_bin} missing: cargo build --release --bin hrry")
    work = args.dir or tempfile.mkdtemp(prefix="hrry-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        print(f"hrry {hrry.__version__}, numpy {np.__version__}, best of {args.repeat}; "
              "ratio = baseline time / hrry time")
        bench_loading(work, args.size_mib, args.repeat)
        shapes = [tuple(int(d) for d in s.split("x")) for s in args.dequant_shapes.split(",")]
        bench_dequant(work, args.repeat, args.rounds, hrry_bin, shapes)
        if args.many:
            bench_open_many(work, args.many, args.repeat)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
