"""Files that change after (or while) they are loaded, tensors whose bytes repeat,
and paths that are not regular files.

`load_file` reads a local file once into private memory: its arrays are the file's
contents at load time, whatever happens to the file afterwards (like
`safetensors.numpy.load_file`). A broadcast tensor (strides of 0) comes out as a
read-only view of its stored bytes, in bounded memory."""

import os
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hrry

from conftest import CORPUS


def _write(path, arrays):
    hrry.save_file(arrays, str(path))


def _rewrite_in_place(path, data):
    """Truncates `path` and writes `data` into the same file (same inode), as
    `cp other path` does."""
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(data)


def test_load_file_arrays_do_not_change_when_the_file_is_replaced(tmp_path):
    first = tmp_path / "first.hrry"
    other = tmp_path / "other.hrry"
    _write(first, {"w": np.full((64, 64), 1.0, np.float32), "b": np.arange(8, dtype=np.int64)})
    _write(other, {"w": np.full((64, 64), 2.0, np.float32), "b": np.arange(8, dtype=np.int64) * 3})
    path = tmp_path / "m.hrry"
    shutil.copyfile(first, path)
    arrays = hrry.load_file(str(path))
    _rewrite_in_place(path, other.read_bytes())
    assert arrays["w"][0, 0] == 1.0 and np.all(arrays["w"] == 1.0)
    assert list(arrays["b"]) == list(range(8))
    # A shorter file over it, then none at all: the arrays stay readable (no SIGBUS).
    _rewrite_in_place(path, b"short")
    assert float(arrays["w"].sum()) == 64 * 64
    os.remove(path)
    assert float(arrays["w"].sum()) == 64 * 64
    assert arrays["w"].flags.writeable
    arrays["w"][0, 0] = 5.0


def test_a_mapped_load_follows_the_file(tmp_path):
    # mmap=True is the mapping, named: values follow a rewrite in place (the hazard
    # docs/security.md describes), which the default load does not.
    path = tmp_path / "m.hrry"
    _write(path, {"w": np.full(1024, 1.0, np.float32)})
    other = tmp_path / "other.hrry"
    _write(other, {"w": np.full(1024, 2.0, np.float32)})
    mapped = hrry.load_file(str(path), mmap=True)
    owned = hrry.load_file(str(path))
    with open(path, "r+b") as f:
        f.write(other.read_bytes())
    assert mapped["w"][0] == 2.0
    assert owned["w"][0] == 1.0


def _patched_broadcast(shape0):
    """corpus/valid/layout-strided-broadcast.hrry (float32 [3, 4], strides [0, 1])
    with its first dimension made `shape0`: one stored row, repeated."""
    data = bytearray(open(os.path.join(CORPUS, "valid", "layout-strided-broadcast.hrry"), "rb").read())
    shape = struct.pack("<QQ", 3, 4)
    assert data.count(shape) == 1
    at = data.index(shape)
    data[at : at + 8] = struct.pack("<Q", shape0)
    return bytes(data)


def test_a_broadcast_tensor_is_a_read_only_view_of_its_bytes(tmp_path):
    path = tmp_path / "b.hrry"
    path.write_bytes(_patched_broadcast(5))
    expected = hrry.open(os.path.join(CORPUS, "valid", "layout-strided-broadcast.hrry")).get_tensor("t")
    t = hrry.load_file(str(path))["t"]
    assert t.shape == (5, 4) and t.strides == (0, 4)
    assert not t.flags.writeable
    assert np.array_equal(t, np.broadcast_to(expected[0], (5, 4)))
    with hrry.open(str(path)) as f:
        assert f.get_tensor("t").strides == (0, 4)


def test_a_broadcast_bomb_loads_in_bounded_memory(tmp_path):
    # 2^26 rows of 16 bytes: 1 GiB of float32 values from a 4 KB file.
    path = tmp_path / "bomb.hrry"
    path.write_bytes(_patched_broadcast(1 << 26))
    assert path.stat().st_size < 8192
    child = textwrap.dedent(
        f"""
        import hrry
        arrays = hrry.load_file({str(path)!r})
        t = arrays["t"]
        assert t.shape == (1 << 26, 4), t.shape
        assert float(t[-1, 3]) == float(t[0, 3])
        with hrry.open({str(path)!r}) as f:
            assert f.get_tensor("t").strides == (0, 4)
        # VmHWM is this process's own peak: ru_maxrss would also count the
        # parent's memory, which the child's address space started from.
        print([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
        """
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    peak_kib = int(out.stdout.split()[-1])
    assert peak_kib < 256 << 10, f"peak {peak_kib} KiB"


@pytest.mark.parametrize(
    "path",
    ["/dev/zero", "/dev/null", "/proc/self/status", "fifo", "directory"],
)
@pytest.mark.parametrize(
    "opener",
    ["open", "load_file", "load_file mmap", "validate"],
)
def test_what_is_not_a_regular_file_is_one_error(tmp_path, path, opener):
    if path == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    elif path == "directory":
        path = str(tmp_path)
    elif not os.path.exists(path):
        pytest.skip(f"{path} is not on this system")
    call = {
        "open": hrry.open,
        "load_file": hrry.load_file,
        "load_file mmap": lambda p: hrry.load_file(p, mmap=True),
        "validate": hrry.validate,
    }[opener]
    with pytest.raises(OSError) as raised:
        call(path)
    assert "not a regular file" in str(raised.value)
    assert raised.value.filename == path
    assert "No such device" not in str(raised.value)
    assert isinstance(raised.value, IsADirectoryError) == (path == str(tmp_path))
