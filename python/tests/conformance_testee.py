"""A conformance testee over the Python package: speaks the JSON Lines protocol of
docs/conformance-protocol.md (version 1) on standard input and output, for

    hrry conformance -- python conformance_testee.py

It shows what an implementer writes: a loop dispatching on "op". `validate` uses
hrry.validate (HRRYFILEs, .holo archives) and hrry.stream.validate (bare streams);
`read` hashes each tensor's dense row-major bytes in their stored encoding, which
it rebuilds from the NumPy arrays the package gives where that is exact (the
NumPy-native types, bfloat16 from its float32 widening, sub-byte integers packed
LSB-first) and leaves out otherwise; `write` goes through hrry.save_file for the
specs NumPy and Python values can express exactly, and answers `skipped` for the
others.
"""

import base64
import hashlib
import json
import sys

import numpy as np

import hrry

# Element types whose NumPy array, as the package gives it, holds exactly the
# stored little-endian bytes.
NATIVE = {
    "float16": "<f2", "float32": "<f4", "float64": "<f8",
    "int8": "i1", "uint8": "u1", "int16": "<i2", "uint16": "<u2",
    "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8",
    "complex64": "<c8", "complex128": "<c16",
}
# Sub-byte types (bool is one bit) and their width in bits; the package gives them
# one per byte.
SUB_BYTE = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2, "bool": 1}


def hello(_request):
    return {
        "protocol": 1,
        "name": "hrry-python",
        "version": hrry.__version__,
        "ops": ["validate", "read", "write"],
        "formats": ["hrryfile", "holo", "stream"],
        "rule_ids": True,
    }


def validate(request):
    if request.get("mode", "strict") != "strict":
        return {"skipped": "only strict mode"}
    if request["format"] == "stream":
        report = hrry.stream.validate(request["path"])
    elif request["format"] in ("hrryfile", "holo"):
        report = hrry.validate(request["path"])
    else:
        return {"skipped": "format " + request["format"]}
    return {"valid": report.valid, "rules": report.rule_ids()}


def pack_bits(values, bits):
    """Sub-byte values (as int8/uint8) packed LSB-first, unused bits zero."""
    codes = values.astype(np.uint8) & ((1 << bits) - 1)
    per_byte = 8 // bits
    padded = np.zeros(-(-codes.size // per_byte) * per_byte, dtype=np.uint8)
    padded[: codes.size] = codes
    groups = padded.reshape(-1, per_byte)
    out = np.zeros(groups.shape[0], dtype=np.uint8)
    for k in range(per_byte):
        out |= groups[:, k] << (k * bits)
    return out.tobytes()


def stored_bytes(f, name, dtype):
    """The tensor's dense row-major bytes in its stored encoding, or None."""
    if dtype in NATIVE:
        return np.ascontiguousarray(f.get_tensor(name), dtype=NATIVE[dtype]).tobytes()
    if dtype == "bfloat16":
        wide = np.ascontiguousarray(f.get_tensor(name), dtype="<f4")
        return (wide.view("<u4") >> 16).astype("<u2").tobytes()
    if dtype in SUB_BYTE:
        return pack_bits(np.ascontiguousarray(f.get_tensor(name)).ravel(), SUB_BYTE[dtype])
    return None


def read(request):
    tensors = []
    with hrry.open(request["path"]) as f:
        for name in f.keys():
            info = f.info(name)
            t = {"name": name, "dtype": info["dtype"], "shape": list(info["shape"])}
            if info["layout"] not in ("composite", "block-paged"):
                if info["quantization"] is not None:
                    try:
                        values = np.ascontiguousarray(f.dequantize(name), dtype="<f4")
                    except hrry.HrryError:
                        values = None  # not dequantized here: the hash is left out
                    if values is not None:
                        digest = hashlib.sha256(values.tobytes()).hexdigest()
                        t["dequantized_sha256"] = digest
                else:
                    data = stored_bytes(f, name, info["dtype"])
                    if data is not None:
                        t["sha256"] = hashlib.sha256(data).hexdigest()
            tensors.append(t)
    return {"tensors": tensors}


def array_of(t):
    """A spec tensor as a NumPy array, or None when NumPy has no such type."""
    data = base64.b64decode(t["data"])
    if t["dtype"] == "bool":
        count = int(np.prod(t["shape"], dtype=np.int64))
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[:count].astype(bool).reshape(t["shape"])
    if t["dtype"] not in NATIVE:
        return None
    return np.frombuffer(data, dtype=NATIVE[t["dtype"]]).reshape(t["shape"])


def scalar(kind, v):
    if kind == "float64" and isinstance(v, str):
        return float(v)
    if kind == "bytes":
        return bytes.fromhex(v)
    return v


def python_value(v):
    """A metadata value as the Python value hrry.save_file stores as the same KV
    type, or raise ValueError."""
    kind = v["type"]
    if kind == "array":
        items = [scalar(v["element_type"], e) for e in v["value"]]
        if not items and v["element_type"] != "string":
            raise ValueError("an empty array that is not of strings")
        check = [{"type": v["element_type"], "value": e} for e in v["value"]]
        for c in check:
            python_value(c)
        return items
    value = scalar(kind, v["value"])
    if kind == "uint64" and value < 2**63:
        raise ValueError("a uint64 below 2^63 (Python stores it as int64)")
    if kind == "int64" and isinstance(value, bool):
        raise ValueError("not an integer")
    return value


def write(request):
    spec = request["spec"]
    arrays = {}
    for t in spec["tensors"]:
        a = array_of(t)
        if a is None:
            return {"skipped": "no NumPy type for " + t["dtype"]}
        arrays[t["name"]] = a
    try:
        metadata = {k: python_value(v) for k, v in spec.get("metadata", {}).items()}
    except ValueError as e:
        return {"skipped": "metadata: " + str(e)}
    hrry.save_file(arrays, request["out"], metadata=metadata)
    return {"ok": True}


OPS = {"hello": hello, "validate": validate, "read": read, "write": write}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        op = request.get("op")
        if op == "bye":
            break
        try:
            answer = OPS[op](request) if op in OPS else {"error": "unknown op"}
        except Exception as e:  # the harness scores it as an error, and goes on
            answer = {"error": "%s: %s" % (type(e).__name__, e)}
        if op != "hello":
            answer["id"] = request.get("id")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
