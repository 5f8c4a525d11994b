#!/usr/bin/env python3
"""Checks `hrry convert` against the `gguf` and `safetensors` Python packages.

Usage: convert_check.py HRRY_BINARY

1. A GGUF file written by `gguf.GGUFWriter` (metadata of every type, dense tensors,
   Q8_0 and Q4_0 tensors quantized by `gguf.quants.quantize`) converts to a
   HRRYFILE that `hrry validate` accepts; converted on to safetensors, its dense
   tensors are byte-identical and its quantized tensors equal, bit for bit,
   `gguf.quants.dequantize` of the original blocks. Its metadata (from
   `hrry inspect --json`) holds every GGUF value, widened.
2. A GGUF file with block types Hurray lacks is refused (exit 1, naming the tensor
   and type); with --dequantize-unsupported its tensors equal the `gguf` package's
   dequantization bit for bit (float32) or after rounding to float16 (--dtype f16).
3. A safetensors file written by the `safetensors` package with every dtype it
   writes, and `__metadata__`, round-trips through HRRYFILE to equal tensors and
   metadata.
4. A 3-shard safetensors checkpoint (files written by `safetensors.numpy.save_file`,
   index as Hugging Face writes it) converts, from its index or its directory, to one
   HRRYFILE whose tensors equal the shards' and whose KV names each tensor's shard.
5. The HRRYFILE of (1) converted to GGUF reads back with `gguf.GGUFReader` equal to
   the original GGUF: same metadata (names, GGUF types, values), same tensors (type,
   shape, bytes: Q8_0 / Q4_0 blocks bit for bit, zero blocks included).
6. The GGUF of (1) written as split files by `gguf.GGUFWriter(split_max_tensors=…)`
   converts, from its first split, to the same tensors and metadata as the unsplit
   file.

Prints one line per check and a final "N passed, N failed"; exits 1 on any failure.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter
from gguf.quants import dequantize, quantize
from safetensors import TensorSpec, deserialize, safe_open, serialize_file

HRRY = sys.argv[1]
passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {what}")
    else:
        failed += 1
        print(f"FAIL  {what}")


def hrry(*args, expect=0):
    p = subprocess.run([HRRY, *map(str, args)], capture_output=True, text=True)
    check(
        p.returncode == expect,
        f"hrry {' '.join(map(str, args[:1]))} ... exits {expect} (got {p.returncode}: {p.stderr.strip()[:300]})",
    )
    return p


def read_safetensors(path):
    """name -> (dtype, shape, bytes), and the metadata, as the safetensors package reads them."""
    with open(path, "rb") as f:
        tensors = {name: (t["dtype"], list(t["shape"]), bytes(t["data"])) for name, t in deserialize(f.read())}
    with safe_open(path, framework="numpy") as f:
        metadata = f.metadata() or {}
    return tensors, metadata


def f32_of(entry):
    dtype, shape, data = entry
    assert dtype in ("float32", "F32"), dtype
    return np.frombuffer(data, dtype=np.float32).reshape(shape)


def bit_equal(a, b):
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ascontiguousarray(b, dtype=np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


rng = np.random.default_rng(20240611)
work = tempfile.mkdtemp(prefix="hrry-convert-check-")
# Removed on every exit, an exception included.
atexit.register(shutil.rmtree, work, ignore_errors=True)

# ---------------------------------------------------------------- 1. GGUF, native
path = os.path.join(work, "a.gguf")
w = GGUFWriter(path, arch="llama")
w.add_uint8("t.u8", 200)
w.add_int8("t.i8", -100)
w.add_uint16("t.u16", 60000)
w.add_int16("t.i16", -30000)
w.add_uint32("t.u32", 4_000_000_000)
w.add_int32("t.i32", -2_000_000_000)
w.add_float32("t.f32", 0.1)
w.add_uint64("t.u64", 2**64 - 1)
w.add_int64("t.i64", -(2**63))
w.add_float64("t.f64", -1e300)
w.add_bool("t.bool", True)
w.add_string("t.str", "héllo ✓")
w.add_array("t.arr_str", ["<s>", "▁the", "</s>"])
w.add_array("t.arr_int", [1, -2, 3])
w.add_array("t.arr_float", [0.5, -1.25])
w.add_array("t.arr_bool", [True, False])

dense = {
    "f32": rng.standard_normal((8, 64)).astype(np.float32),
    "f16": rng.standard_normal((4, 32)).astype(np.float16),
    "i8": rng.integers(-128, 127, (5, 3), dtype=np.int8),
    "i16": rng.integers(-30000, 30000, (7,), dtype=np.int16),
    "i32": rng.integers(-(2**31), 2**31 - 1, (2, 2, 3), dtype=np.int32),
    "f64": rng.standard_normal((3,)).astype(np.float64),
}
for name, arr in dense.items():
    w.add_tensor(name, arr)
bf_src = rng.standard_normal((4, 16)).astype(np.float32)
bf16 = quantize(bf_src, Q.BF16)
w.add_tensor("bf16", bf16, raw_dtype=Q.BF16)

quantized = {}
for qt, shape in ((Q.Q8_0, (16, 128)), (Q.Q4_0, (2, 4, 96))):
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1, 32)[1] = 0.0  # an all-zero block: scale 0
    blocks = quantize(x, qt)
    quantized[qt.name.lower()] = (qt, blocks)
    w.add_tensor(qt.name.lower(), blocks, raw_dtype=qt)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

a_hrry = os.path.join(work, "a.hrry")
hrry("convert", path, a_hrry)
hrry("validate", a_hrry)
inspect = hrry("inspect", "--json", a_hrry)
kv = json.loads(inspect.stdout or "{}").get("kv", {}) if inspect.returncode == 0 else {}
expected_kv = {
    "general.architecture": ("string", "llama"),
    "t.u8": ("uint64", 200),
    "t.i8": ("int64", -100),
    "t.u16": ("uint64", 60000),
    "t.i16": ("int64", -30000),
    "t.u32": ("uint64", 4_000_000_000),
    "t.i32": ("int64", -2_000_000_000),
    "t.f32": ("float64", float(np.float32(0.1))),
    "t.u64": ("uint64", 2**64 - 1),
    "t.i64": ("int64", -(2**63)),
    "t.f64": ("float64", -1e300),
    "t.bool": ("bool", True),
    "t.str": ("string", "héllo ✓"),
}
for key, (ty, value) in expected_kv.items():
    got = kv.get(key, {})
    check(got.get("type") == ty and got.get("value") == value, f"GGUF metadata {key} = {ty} {value!r} (got {got})")


def array_values(key):
    v = kv.get(key, {}).get("value", [])
    return [e.get("value", e) if isinstance(e, dict) else e for e in v]


check(array_values("t.arr_str") == ["<s>", "▁the", "</s>"], "GGUF string array")
check(array_values("t.arr_int") == [1, -2, 3], "GGUF int array")
check(array_values("t.arr_float") == [0.5, -1.25], "GGUF float array")
check(array_values("t.arr_bool") == [True, False], "GGUF bool array")

a_st = os.path.join(work, "a.safetensors")
hrry("convert", a_hrry, a_st)
tensors, _ = read_safetensors(a_st)
for name, arr in dense.items():
    dtype, shape, data = tensors.get(name, (None, None, b""))
    check(shape == list(arr.shape) and data == arr.tobytes(), f"dense GGUF tensor {name} {arr.dtype} {arr.shape} unchanged")
dtype, shape, data = tensors.get("bf16", (None, None, b""))
check(dtype in ("bfloat16", "BF16") and shape == [4, 16] and data == bf16.tobytes(), "dense GGUF tensor bf16 unchanged")
for name, (qt, blocks) in quantized.items():
    want = dequantize(blocks, qt)
    got = f32_of(tensors[name]) if name in tensors else None
    check(got is not None and bit_equal(got, want), f"{qt.name} {want.shape}: hrry dequantization == gguf.quants.dequantize, bit for bit")

# ------------------------------------------------ 2. GGUF, types Hurray lacks
path = os.path.join(work, "b.gguf")
w = GGUFWriter(path, arch="llama")
unsupported = {}
for qt in (Q.Q4_1, Q.Q5_0, Q.Q5_1):
    x = rng.standard_normal((3, 64)).astype(np.float32)
    unsupported[qt.name] = (qt, quantize(x, qt))
# Types without a quantizer in the gguf package: random blocks with finite float16 scales.
f16_fields = {
    Q.Q2_K: (80, 82), Q.Q3_K: (108,), Q.Q4_K: (0, 2), Q.Q5_K: (0, 2), Q.Q6_K: (208,),
    Q.IQ4_NL: (0,), Q.IQ4_XS: (0,), Q.TQ1_0: (52,), Q.TQ2_0: (64,), Q.MXFP4: (),
}
from gguf.constants import GGML_QUANT_SIZES

for qt, fields in f16_fields.items():
    block, size = GGML_QUANT_SIZES[qt]
    blocks = rng.integers(0, 256, (2, 2 * size), dtype=np.uint8)
    for row in blocks.reshape(-1, size):
        for at in fields:
            row[at:at + 2] = np.frombuffer(np.float16(rng.uniform(-2, 2)).tobytes(), dtype=np.uint8)
    unsupported[qt.name] = (qt, blocks)
for name, (qt, blocks) in unsupported.items():
    w.add_tensor(name, blocks, raw_dtype=qt)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

b_hrry = os.path.join(work, "b.hrry")
p = hrry("convert", path, b_hrry, expect=1)
check("Q4_1" in p.stderr and "--dequantize-unsupported" in p.stderr, f"refusal names the tensor and type ({p.stderr.strip()[:200]})")
check(not os.path.exists(b_hrry), "no output after a refusal")
for dtype in ("f32", "f16"):
    hrry("convert", "--dequantize-unsupported", "--dtype", dtype, path, b_hrry)
    hrry("validate", b_hrry)
    b_st = os.path.join(work, f"b-{dtype}.safetensors")
    hrry("convert", b_hrry, b_st)
    tensors, _ = read_safetensors(b_st)
    for name, (qt, blocks) in unsupported.items():
        want = dequantize(blocks, qt)
        entry = tensors.get(name)
        if entry is None:
            check(False, f"{name} present")
            continue
        if dtype == "f32":
            ok = bit_equal(f32_of(entry), want)
        else:
            got = np.frombuffer(entry[2], dtype=np.float16).reshape(entry[1])
            with np.errstate(over="ignore"):  # MXFP4 values beyond float16 become inf on both sides
                rounded = want.astype(np.float16)
            ok = entry[0] in ("float16", "F16") and np.array_equal(got.view(np.uint16), rounded.view(np.uint16))
        check(ok, f"--dequantize-unsupported --dtype {dtype}: {name} == gguf.quants.dequantize")

# ---------------------------------------------------- 3. safetensors round trip
specs = {
    "bool": (1, None), "int8": (1, None), "uint8": (1, None), "int16": (2, None), "uint16": (2, None),
    "int32": (4, None), "uint32": (4, None), "int64": (8, None), "uint64": (8, None),
    "float16": (2, None), "float32": (4, None), "float64": (8, None), "bfloat16": (2, None),
    "float8_e4m3fn": (1, None), "float8_e4m3fnuz": (1, None), "float8_e5m2": (1, None),
    "float8_e5m2fnuz": (1, None), "float8_e8m0fnu": (1, None), "float4_e2m1fn_x2": (1, [3, 4]),
    "complex64": (8, None),
}
buffers = {}
spec_dict = {}
for dt, (size, storage_shape) in specs.items():
    shape = storage_shape or [3, 5]
    n = int(np.prod(shape))
    data = rng.integers(0, 256, n * size, dtype=np.uint8)
    if dt == "bool":
        data &= 1
    buffers[dt] = data
    spec_dict[f"w.{dt}"] = TensorSpec(dtype=dt, shape=shape, data_ptr=data.ctypes.data, data_len=data.nbytes)
scalar = np.array([1.5], dtype=np.float32)
spec_dict["scalar"] = TensorSpec(dtype="float32", shape=[], data_ptr=scalar.ctypes.data, data_len=4)
metadata = {"format": "np", "comment": "ünïcode ✓", "empty": ""}
st = os.path.join(work, "c.safetensors")
serialize_file(spec_dict, st, metadata=metadata)
c_hrry = os.path.join(work, "c.hrry")
hrry("convert", st, c_hrry)
hrry("validate", c_hrry)
st2 = os.path.join(work, "c2.safetensors")
hrry("convert", c_hrry, st2)
before, meta_before = read_safetensors(st)
after, meta_after = read_safetensors(st2)
check(meta_after == metadata == meta_before, f"safetensors __metadata__ round-trips ({meta_after})")
check(sorted(before) == sorted(after), "same tensor names")
for name in sorted(before):
    check(after.get(name) == before[name], f"safetensors tensor {name} {before[name][0]} {before[name][1]} round-trips")

# ----------------------------------------- 4. sharded safetensors checkpoint
from safetensors.numpy import load_file, save_file

ck = os.path.join(work, "ckpt")
os.makedirs(ck)
shards = [
    {
        "model.embed_tokens.weight": rng.standard_normal((32, 16)).astype(np.float32),
        "model.layers.0.input_layernorm.weight": rng.standard_normal((16,)).astype(np.float16),
    },
    {
        "model.layers.0.mlp.up_proj.weight": rng.standard_normal((24, 16)).astype(np.float16),
        "model.layers.0.mlp.gate": rng.integers(-128, 127, (4, 6), dtype=np.int8),
        "model.layers.0.mask": rng.integers(0, 2, (9,)).astype(np.bool_),
    },
    {
        "lm_head.weight": rng.standard_normal((32, 16)).astype(np.float32),
        "model.rotary.inv_freq": rng.standard_normal((8,)).astype(np.float64),
    },
]
weight_map = {}
for i, tensors in enumerate(shards):
    name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
    save_file(tensors, os.path.join(ck, name), metadata={"format": "pt"})
    weight_map.update({k: name for k in tensors})
index = os.path.join(ck, "model.safetensors.index.json")
with open(index, "w") as f:
    json.dump({"metadata": {"total_size": sum(a.nbytes for t in shards for a in t.values())},
               "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
ck_hrry = os.path.join(work, "ckpt.hrry")
hrry("convert", index, ck_hrry)
hrry("validate", ck_hrry)
ck_st = os.path.join(work, "ckpt.safetensors")
hrry("convert", ck_hrry, ck_st)
merged = load_file(ck_st)
for tensors in shards:
    for name, arr in tensors.items():
        got = merged.get(name)
        check(got is not None and got.dtype == arr.dtype and got.shape == arr.shape and got.tobytes() == arr.tobytes(),
              f"checkpoint tensor {name} {arr.dtype} {arr.shape} equals its shard's")
check(sorted(merged) == sorted(weight_map), "checkpoint: the same tensor names as the index")
inspect = hrry("inspect", "--json", ck_hrry)
kv = json.loads(inspect.stdout or "{}").get("kv", {}) if inspect.returncode == 0 else {}
for name, shard in weight_map.items():
    got = kv.get(f"hrry.source.tensor.{name}", {}).get("value")
    check(got == shard, f"KV records {name} from {shard} (got {got})")
ck_dir_hrry = os.path.join(work, "ckpt-dir.hrry")
hrry("convert", ck, ck_dir_hrry)
check(open(ck_dir_hrry, "rb").read() == open(ck_hrry, "rb").read(), "the checkpoint's directory converts to the same file")

# ------------------------------------------------- 5. HRRYFILE -> GGUF -> gguf-py
from gguf import GGUFReader

a_gguf = os.path.join(work, "a.gguf")
a2_gguf = os.path.join(work, "a2.gguf")
hrry("convert", a_hrry, a2_gguf)
r0, r1 = GGUFReader(a_gguf), GGUFReader(a2_gguf)
for name, f0 in r0.fields.items():
    if name.startswith("GGUF."):
        continue
    f1 = r1.fields.get(name)
    ok = f1 is not None and list(f1.types) == list(f0.types) and f1.contents() == f0.contents()
    check(ok, f"GGUF -> HRRYFILE -> GGUF: metadata {name} {[t.name for t in f0.types]} = {f0.contents()!r:.40}")
check(sorted(r1.fields) == sorted(r0.fields), "GGUF -> HRRYFILE -> GGUF: the same metadata keys")
t1s = {t.name: t for t in r1.tensors}
for t0 in r0.tensors:
    t1 = t1s.get(t0.name)
    ok = (t1 is not None and t1.tensor_type == t0.tensor_type and list(t1.shape) == list(t0.shape)
          and t1.data.tobytes() == t0.data.tobytes())
    check(ok, f"GGUF -> HRRYFILE -> GGUF: tensor {t0.name} {t0.tensor_type.name} {list(t0.shape)} bit for bit")
    if ok and t0.tensor_type in (Q.Q8_0, Q.Q4_0):
        check(bit_equal(dequantize(t1.data, t1.tensor_type), dequantize(t0.data, t0.tensor_type)),
              f"{t0.tensor_type.name} {t0.name}: gguf.quants.dequantize equal")

# ------------------------------------------------------------ 6. GGUF split files
split_dir = os.path.join(work, "split")
os.makedirs(split_dir)
w = GGUFWriter(os.path.join(split_dir, "a.gguf"), arch="llama", split_max_tensors=3)
for field in r0.fields.values():
    if field.name.startswith("GGUF.") or field.name == "general.architecture":
        continue
    main = field.types[0]
    if main == gguf.GGUFValueType.ARRAY:
        w.add_key_value(field.name, field.contents(), main, sub_type=field.types[-1])
    else:
        w.add_key_value(field.name, field.contents(), main)
for t0 in r0.tensors:
    w.add_tensor(t0.name, t0.data, raw_dtype=t0.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
splits = sorted(f for f in os.listdir(split_dir) if f.endswith(".gguf"))
n_splits = -(-len(r0.tensors) // 3)
check(len(splits) == n_splits > 1 and splits[0] == f"a-00001-of-{n_splits:05d}.gguf", f"gguf-py wrote split files ({splits})")
split_hrry = os.path.join(work, "split.hrry")
hrry("convert", os.path.join(split_dir, splits[0]), split_hrry)
hrry("validate", split_hrry)
split_st = os.path.join(work, "split.safetensors")
hrry("convert", split_hrry, split_st)
whole, _ = read_safetensors(a_st)
parts, _ = read_safetensors(split_st)
check(sorted(parts) == sorted(whole), "split set: the same tensor names as the unsplit file")
for name in sorted(whole):
    check(parts.get(name) == whole[name], f"split set: tensor {name} equals the unsplit file's")
inspect = hrry("inspect", "--json", split_hrry)
kv = json.loads(inspect.stdout or "{}").get("kv", {}) if inspect.returncode == 0 else {}
check("split.count" not in kv and kv.get("t.str", {}).get("value") == "héllo ✓",
      "split set: the first split's metadata, without split.*")
check(len(kv.get("hrry.source.files", {}).get("value", [])) == n_splits, f"split set: KV lists the {n_splits} files")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
