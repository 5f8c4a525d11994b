"""The memory bound and the memory cap from Python.

`hrry.open`, `hrry.load_file` and `hrry.validate` on every file of the hostile set
(`cargo run -p hrry-tools --bin hostile_files DIR`: KV arrays of each type, sparse
and dense, many tiny tensors, broadcast tensors, nested composites, many KV
entries, long names), each in a fresh process that reads its own peak resident
memory (VmHWM; `ru_maxrss` of a child would count its parent): an answer (arrays,
a report, or an exception of hrry's: InvalidFileError, HrryError, OSError), never a
crash, and a peak that grows by at
most 64 MiB + 2 x the file's length over what the process held before the call —
the bound docs/security.md states for the bindings. `max_memory=` caps the
budget: a file whose metadata needs more is refused naming HF-LIM-001 and
max_memory."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hrry
from conftest import ROOT

MIB = 1 << 20

CHILD = r"""
import json, sys
import numpy, hrry

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0

entry, path = sys.argv[1], sys.argv[2]
before = status("VmRSS:")
try:
    if entry == "open":
        with hrry.open(path) as f:
            answer = f"{len(f.keys())} tensors"
    elif entry == "load_file":
        answer = f"{len(hrry.load_file(path))} arrays"
    else:
        answer = hrry.validate(path).verdict
except hrry.InternalError:  # a bug caught at the boundary: a failure here
    raise
except (hrry.HrryError, OSError) as e:  # InvalidFileError is a HrryError
    answer = type(e).__name__ + ": " + str(e)[:200]
print(json.dumps({"answer": answer, "before": before, "peak": status("VmHWM:")}))
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile set at scale 1, written by the test support's generator."""
    out = tmp_path_factory.mktemp("hostile")
    subprocess.run(
        ["cargo", "run", "--release", "--quiet", "-p", "hrry-tools", "--bin",
         "hostile_files", str(out), "1"],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
    )
    files = sorted(str(out / n) for n in os.listdir(out) if n.endswith(".hrry"))
    assert len(files) >= 10, files
    return files


@pytest.mark.parametrize("entry", ["open", "load_file", "validate"])
def test_hostile_files_stay_within_the_memory_bound(hostile, entry):
    failures = []
    for path in hostile:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, entry, path], capture_output=True, text=True
        )
        name = os.path.basename(path)
        if done.returncode != 0:
            failures.append(f"{entry} {name}: exit {done.returncode}: {done.stderr[-2000:]}")
            continue
        got = json.loads(done.stdout)
        size = os.path.getsize(path)
        bound = 64 * MIB + 2 * size
        grown = got["peak"] - got["before"]
        print(f"hrry.{entry} {name}: {size} bytes ({os.stat(path).st_blocks * 512} on disk), "
              f"{got['answer'][:60]}, peak {got['peak'] / MIB:.1f} MiB, grown "
              f"{grown / MIB:.1f} MiB (bound {bound / MIB:.1f})")
        if grown > bound:
            failures.append(f"{entry} {name}: grew by {grown} bytes, over 64 MiB + 2 x {size}")
    assert not failures, "\n".join(failures)


@pytest.fixture(scope="module")
def kv_file(tmp_path_factory):
    """A valid file whose KV holds a 1 MiB array (131072 int64)."""
    path = tmp_path_factory.mktemp("cap") / "kv.hrry"
    hrry.save_file({"w": np.ones(4, dtype=np.float32)}, path,
                   metadata={"tokens": list(range(1 << 17))})
    return str(path)


def test_max_memory_caps_open_load_file_and_validate(kv_file):
    # Within the default cap (and one set high), all is well.
    assert hrry.validate(kv_file).verdict == "valid"
    assert hrry.validate(kv_file, max_memory=1 << 30).verdict == "valid"
    with hrry.open(kv_file, max_memory=1 << 30) as f:
        assert f.keys() == ["w"]
    assert list(hrry.load_file(kv_file, max_memory=1 << 30)) == ["w"]

    # Under 512 KiB, the KV section's 1 MiB is past the budget.
    report = hrry.validate(kv_file, max_memory=512 << 10)
    assert report.verdict == "refused"
    assert any(v.rule == "HF-LIM-001" and v.level == "limit" and "max_memory" in v.message
               for v in report.violations), report.violations
    for load in (lambda: hrry.open(kv_file, max_memory=512 << 10),
                 lambda: hrry.open(kv_file, max_memory=512 << 10, check="full"),
                 lambda: hrry.load_file(kv_file, max_memory=512 << 10),
                 lambda: hrry.load_file(kv_file, max_memory=512 << 10, mmap=True)):
        with pytest.raises(hrry.InvalidFileError) as raised:
            load()
        assert "HF-LIM-001" in str(raised.value) and "max_memory" in str(raised.value)
        assert [v.rule for v in raised.value.violations] == ["HF-LIM-001"]

    # From bytes and a file object too.
    with open(kv_file, "rb") as f:
        data = f.read()
    assert hrry.validate(data, max_memory=512 << 10).verdict == "refused"
    with open(kv_file, "rb") as f, pytest.raises(hrry.InvalidFileError):
        hrry.open(f, max_memory=512 << 10)

    # Not a size.
    with pytest.raises((OverflowError, TypeError)):
        hrry.validate(kv_file, max_memory=-1)


def test_max_memory_caps_holo_open():
    """`hrry.holo.open(max_memory=)` caps the budget of what the sections make the
    loader hold: past it, InvalidFileError naming HF-LIM-001 and max_memory."""
    path = os.path.join(ROOT, "corpus", "valid", "full.holo")
    with hrry.holo.open(path) as archive:
        assert archive.sections
    with hrry.holo.open(path, max_memory=1 << 30) as archive:
        assert archive.sections
    with open(path, "rb") as f:
        data = f.read()
    # 64 bytes: less than its first structured section.
    for source in (path, data):
        with pytest.raises(hrry.InvalidFileError) as raised:
            hrry.holo.open(source, max_memory=64)
        assert "HF-LIM-001" in str(raised.value) and "max_memory" in str(raised.value)
        assert [v.rule for v in raised.value.violations] == ["HF-LIM-001"]
    with pytest.raises((OverflowError, TypeError)):
        hrry.holo.open(path, max_memory=-1)
