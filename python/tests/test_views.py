"""Zero-copy views: read-only (or writeable over a private copy-on-write mapping, as
`load_file` gives them), kept alive by their base after close(), and the File API
around them (lookup errors, closed files, info)."""

import gc
import hashlib

import numpy as np
import pytest

import hrry
from conftest import mapped_ranges


@pytest.fixture
def sample_file(tmp_path):
    path = tmp_path / "v.hrry"
    tensors = {
        "w": np.arange(64, dtype=np.float32).reshape(8, 8),
        "b": np.arange(8, dtype=np.int64),
        "mask": np.array([True, False, True]),
        "s": np.float64(2.5).reshape(()),
    }
    hrry.save_file(tensors, path, metadata={"k": "v"})
    return path, tensors


def test_views_are_read_only_and_zero_copy(sample_file):
    path, tensors = sample_file
    raw = path.read_bytes()
    with hrry.open(path) as f:
        w = f.get_tensor("w")
        assert not w.flags.writeable and not w.flags.owndata
        with pytest.raises(ValueError):
            w[0, 0] = 1.0
        with pytest.raises(ValueError):
            w.setflags(write=True)
        # The view's bytes are the file's bytes at the buffer offset (no copy).
        assert raw.find(w.tobytes()) >= 0
        assert w.base is not None
        # Two lookups view the same memory.
        assert f.get_tensor("w").__array_interface__["data"][0] == w.__array_interface__["data"][0]
        # Bool is stored as bits: a new, writeable array.
        mask = f.get_tensor("mask")
        assert mask.flags.writeable
        assert mask.tolist() == [True, False, True]
        mask[0] = False  # writeable copy; the file is untouched
    assert hrry.load_file(path)["mask"].tolist() == [True, False, True]


@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.1.0",
    reason="read-only DLPack export needs NumPy 2.1",
)
def test_views_export_dlpack_read_only_and_zero_copy(sample_file):
    path, tensors = sample_file
    f = hrry.open(path)
    w = f.get_tensor("w")
    shared = np.from_dlpack(w)  # a DLPack 1.0 consumer: read-only memory allowed
    assert shared.ctypes.data == w.ctypes.data and not shared.flags.writeable
    f.close()
    del w
    gc.collect()
    assert np.array_equal(shared, tensors["w"])  # the capsule keeps the mapping alive
    # Consumers of the unversioned protocol cannot mark memory read-only: refused.
    with hrry.open(path) as f:
        with pytest.raises(BufferError):
            f.get_tensor("w").__dlpack__()
    # load_file's arrays are writeable (a private mapping): exported as they are.
    writeable = hrry.load_file(path)["w"]
    capsule_view = np.from_dlpack(writeable)
    assert capsule_view.ctypes.data == writeable.ctypes.data


def test_views_survive_close_and_file_deletion(sample_file):
    path, tensors = sample_file
    f = hrry.open(path)
    w = f.get_tensor("w")
    s = f.get_tensor("s")
    f.close()
    f.close()  # idempotent
    assert f.closed
    del f
    gc.collect()
    assert np.array_equal(w, tensors["w"]) and s.shape == () and s == 2.5
    loaded = hrry.load_file(path)
    path.unlink()
    gc.collect()
    assert np.array_equal(loaded["b"], tensors["b"])
    assert float(loaded["w"].sum()) == float(tensors["w"].sum())


def test_closed_file_raises_value_error(sample_file):
    path, _ = sample_file
    with hrry.open(path) as f:
        pass
    for call in (
        f.keys,
        lambda: len(f),
        lambda: "w" in f,
        lambda: list(f),
        lambda: f.metadata,
        lambda: f.info("w"),
        lambda: f.get_tensor("w"),
        lambda: f.dequantize("w"),
        lambda: f["w"],
    ):
        with pytest.raises(ValueError):
            call()
    assert "closed" in repr(f)


def test_lookup_and_info(sample_file):
    path, tensors = sample_file
    with hrry.open(path) as f:
        assert f.keys() == list(tensors) and len(f) == 4
        assert "w" in f and "nope" not in f and 3 not in f
        for bad in (f.get_tensor, f.info, f.dequantize, f.__getitem__):
            with pytest.raises(KeyError):
                bad("nope")
        info = f.info("w")
        assert info == {
            "dtype": "float32",
            "shape": (8, 8),
            "layout": "row-major",
            "quantization": None,
            "buffers": [256],
        }
        assert f.info("mask")["dtype"] == "bool" and f.info("mask")["buffers"] == [1]
        assert f.metadata == {"k": "v"}
        with pytest.raises(hrry.HrryError, match="not quantized"):
            f.dequantize("w")
        assert np.array_equal(f["b"], tensors["b"])
        assert str(path) == f.path and "4 tensor" in repr(f)


def test_open_checks_strictly_and_names_violations(sample_file, tmp_path):
    path, _ = sample_file
    data = bytearray(path.read_bytes())
    data += b"\0" * 8  # bytes after the trailer: accounted for by nothing
    bad = tmp_path / "bad.hrry"
    bad.write_bytes(bytes(data))
    with pytest.raises(hrry.InvalidFileError) as caught:
        hrry.open(bad)
    violations = caught.value.violations
    assert violations and all(isinstance(v, hrry.Violation) for v in violations)
    v = violations[0]
    assert v.rule and v.level in ("spec", "hardening", "limit") and v.offset >= 0 and v.message
    assert v.rule in str(caught.value)
    report = hrry.validate(bytes(data))
    assert not report and violations == report.violations[:1]
    empty = tmp_path / "empty.hrry"
    empty.write_bytes(b"")
    with pytest.raises(hrry.InvalidFileError):
        hrry.open(empty)
    assert not hrry.validate(empty).valid
    assert not hrry.validate(b"").valid
    with pytest.raises(OSError):
        hrry.open(tmp_path)  # a directory


@pytest.mark.parametrize("mmap", [False, True])
def test_load_file_arrays_are_writeable_without_copying(sample_file, mmap):
    # safetensors.numpy.load_file's arrays are writeable: so are these, views of
    # the file read once into private memory (by default: no mapping of the file
    # is left) or of a private mapping of the file (mmap=True), without a copy per
    # array, and writing never reaches the file.
    path, tensors = sample_file
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = hrry.load_file(path, mmap=mmap)
    for name in ("w", "b", "s"):
        a = loaded[name]
        assert a.flags.writeable and not a.flags.owndata, name
        ptr = a.__array_interface__["data"][0]
        in_file_mapping = any(s <= ptr and ptr + a.nbytes <= e for s, e in mapped_ranges(path))
        assert in_file_mapping == mmap, name
    for name in ("w", "b", "s"):
        loaded[name] *= 2
    loaded["mask"][0] = False
    assert loaded["w"][1, 0] == 16.0 and loaded["s"] == 5.0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    again = hrry.load_file(path)
    for name, want in tensors.items():
        assert np.array_equal(again[name], want), name


def test_open_copy_on_write_gives_writeable_views(sample_file):
    path, _ = sample_file
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with hrry.open(path, copy_on_write=True) as f:
        assert f.copy_on_write
        w = f.get_tensor("w")
        w[0, 0] = -1.0
        # Later reads of the tensor from this File see the write; the file does not.
        assert f.get_tensor("w")[0, 0] == -1.0
    with hrry.open(path) as f:
        assert not f.copy_on_write and f.get_tensor("w")[0, 0] == 0.0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
