"""Loading a 512 MiB bfloat16 file with hrry.torch maps it: resident memory grows by
far less than the file, the tensor's storage lies inside the file's mapping, and
writing into the tensor leaves the file unchanged. Measured in a fresh process so
that nothing the test itself allocated counts."""

import json
import os
import subprocess
import sys

from conftest import optional

torch = optional("torch")
import hrry.torch  # noqa: E402

ROWS, COLS = 65536, 4096  # bfloat16: 512 MiB
ONE = 0x3F80  # bfloat16 1.0

CHILD = r"""
import json, sys
import hrry.torch, torch
from conftest import mapped_ranges

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

path = sys.argv[1]
before = rss()
tensors = hrry.torch.load_file(path)
grown = rss() - before
w = tensors["w"]
storage = w.untyped_storage()
ptr, nbytes = storage.data_ptr(), storage.nbytes()
inside = [(s, e) for s, e in mapped_ranges(path) if s <= ptr and ptr + nbytes <= e]
offset = ptr - inside[0][0] if inside else None
w[0, :4] = 5.0
w[-1, -4:] = 7.0
# Another load maps the file again: a write that reached the file would show.
again = hrry.torch.load_file(path)["w"]
with open(path, "rb") as f:
    f.seek(offset)
    head = f.read(8)
    f.seek(offset + nbytes - 8)
    tail = f.read(8)
print(json.dumps({
    "grown": grown, "dtype": str(w.dtype), "shape": list(w.shape), "nbytes": nbytes,
    "inside": bool(inside), "written": [w[0, 0].item(), w[-1, -1].item()],
    "again": [again[0, 0].item(), again[-1, -1].item()],
    "file": [head.hex(), tail.hex()],
}))
"""


def test_512_mib_bfloat16_file_is_mapped_not_read(tmp_path):
    path = tmp_path / "big.hrry"
    w = torch.empty((ROWS, COLS), dtype=torch.bfloat16)
    w.view(torch.int16).fill_(ONE)
    hrry.torch.save_file({"w": w}, path)
    del w
    tests_dir = os.path.dirname(__file__)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        cwd=tests_dir,
        env={**os.environ, "PYTHONPATH": tests_dir},
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["dtype"] == "torch.bfloat16" and got["shape"] == [ROWS, COLS]
    assert got["nbytes"] == ROWS * COLS * 2
    assert got["grown"] < 64 << 20, f"resident memory grew by {got['grown'] >> 20} MiB"
    assert got["inside"], "the tensor's storage is not inside the file's mapping"
    assert got["written"] == [5.0, 7.0]
    assert got["again"] == [1.0, 1.0]
    one = ONE.to_bytes(2, "little").hex() * 4
    assert got["file"] == [one, one]
