"""A testee for `hrry conformance` over the upstream Hurray Python package.

Speaks the testee protocol (docs/conformance-protocol.md) on standard input and
output, one JSON object a line:

- `validate` (HRRYFILE): `hurray.load(path)`, then every buffer of every tensor
  read out (`Tensor.buffer(i)` through NumPy) and, for the element types NumPy
  holds, the tensor itself as an array. The file is valid when nothing raises.
  The package names no hrry rule, so `rule_ids` is false; the exception is the
  answer's `message`.
- `read` (HRRYFILE): each tensor's name, element type name and shape, and, for a
  row-major tensor without quantization whose elements fill whole bytes, the
  SHA-256 of the first `size * bit_width / 8` bytes of its data buffer (the read
  tier's hash of a dense row-major tensor). Other tensors leave their hashes out.

A Rust panic inside the package (PyO3's `PanicException`) is a crash: the
adapter prints it to standard error and exits, as the same panic aborts a
program without Python around it. The exit status, 112 to 127, is derived from
the panic's message (its CRC-32 modulo 16), so that `explore`, which tells crashes
apart by how the testee ended, keeps different panics apart.

Used by tests/conformance/upstream.sh; not part of the test suite.
"""

import hashlib
import json
import os
import sys
import traceback
import zlib

import numpy as np

import hurray

PROTOCOL = 1


def hello():
    return {
        "protocol": PROTOCOL,
        "name": "hurray (upstream Python package)",
        "version": getattr(hurray, "__version__", "?"),
        "ops": ["validate", "read"],
        "formats": ["hrryfile"],
        "rule_ids": False,
    }


def is_panic(exc):
    return type(exc).__name__ == "PanicException"


def touch(tensor):
    """Reads every byte the tensor exposes, as a consumer of its values would."""
    count = getattr(tensor, "py_buffer_count", None)
    if count is None:
        count = 1
    for i in range(int(count)):
        view = tensor.buffer(i)
        np.asarray(view).tobytes()
    if tensor.layout.name == "row_major" and tensor.quantization is None:
        try:
            np.asarray(tensor)
        except (TypeError, NotImplementedError, BufferError):
            pass  # An element type NumPy has no dtype for.


def validate(request):
    if request.get("format", "hrryfile") != "hrryfile":
        return {"skipped": "only HRRYFILEs"}
    try:
        tensors = hurray.load(request["path"])
        for t in tensors.values():
            touch(t)
    except BaseException as e:  # noqa: BLE001 - every failure is the answer
        if is_panic(e) or not isinstance(e, Exception):
            raise
        return {"valid": False, "rules": [], "message": f"{type(e).__name__}: {e}"}
    return {"valid": True, "rules": []}


def reading(name, t):
    out = {"name": name, "dtype": t.dtype.name, "shape": [int(d) for d in t.shape]}
    bits = t.dtype.bit_width
    if t.layout.name != "row_major" or t.quantization is not None or bits % 8 or not bits:
        return out  # Not a byte-wide element type the package knows the width of.
    size = 1
    for d in out["shape"]:
        size *= d
    data = np.asarray(t.buffer(0)).tobytes()[: size * bits // 8]
    out["sha256"] = hashlib.sha256(data).hexdigest()
    return out


def read(request):
    try:
        tensors = hurray.load(request["path"])
        return {"tensors": [reading(n, t) for n, t in tensors.items()]}
    except BaseException as e:  # noqa: BLE001
        if is_panic(e) or not isinstance(e, Exception):
            raise
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        op = request.get("op")
        if op == "bye":
            break
        if op == "hello":
            answer = hello()
        else:
            try:
                if op == "validate":
                    answer = validate(request)
                elif op == "read":
                    answer = read(request)
                else:
                    answer = {"skipped": f"op {op!r} is not offered"}
            except BaseException as e:  # a panic: end as the process would
                traceback.print_exc(file=sys.stderr)
                sys.stderr.flush()
                os._exit(112 + zlib.crc32(str(e).encode()) % 16)
            answer["id"] = request.get("id")
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
