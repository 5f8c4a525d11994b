"""save_file / load_file round trips, metadata, and what save_file refuses."""

import os

import numpy as np
import pytest

import hrry
from conftest import run_hrry

# Every NumPy dtype the format holds exactly, with values that exercise its range.
DTYPES = [
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        values = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    elif dt.kind == "f":
        values = (rng.standard_normal(n) * 100).astype(dt)
        if n >= 4:
            values[:4] = [np.nan, np.inf, -np.inf, -0.0]
    else:
        values = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        if n >= 2:
            values[:2] = [complex(np.nan, -0.0), complex(np.inf, 1)]
    return values.reshape(shape)


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (2, 3, 4, 2)])
def test_round_trip_every_dtype(dtype, shape, tmp_path):
    path = tmp_path / "t.hrry"
    array = sample(dtype, shape)
    hrry.save_file({"x": array}, path)
    assert hrry.validate(path).valid
    loaded = hrry.load_file(path)
    assert list(loaded) == ["x"]
    assert_same(loaded["x"], array)
    with hrry.open(path) as f:
        assert f.info("x")["dtype"] == ("bool" if dtype == "bool" else dtype)
        assert f.info("x")["shape"] == shape


def test_round_trip_matches_cli_export(tmp_path, hrry_bin):
    tensors = {d: sample(d, (4, 9), seed=i) for i, d in enumerate(DTYPES)}
    path = tmp_path / "all.hrry"
    hrry.save_file(tensors, path)
    for name, array in tensors.items():
        out = tmp_path / f"{name}.npy"
        done = run_hrry("export", str(path), name, "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert_same(np.load(out), array)


def test_many_tensors_keep_order_and_metadata(tmp_path):
    rng = np.random.default_rng(1)
    tensors = {f"layer.{i}.w": rng.standard_normal((i + 1, 3)).astype(np.float32) for i in range(20)}
    metadata = {
        "name": "model",
        "unicode": "héllo ✓",
        "count": -5,
        "big": 2**63 + 7,
        "max": 2**64 - 1,
        "ratio": 0.25,
        "nan": float("inf"),
        "flag": True,
        "off": False,
        "raw": b"\x00\xff",
        "ints": [1, -2, 3],
        "uints": [1, 2**63],
        "floats": [0.5, 1.5],
        "bools": [True, False],
        "strs": ["a", "b"],
        "blobs": [b"x", b""],
        "tuple": (1, 2),
        "empty": [],
    }
    path = tmp_path / "m.hrry"
    hrry.save_file(tensors, path, metadata=metadata)
    with hrry.open(path) as f:
        assert f.keys() == list(tensors)
        md = f.metadata
    expected = dict(metadata, tuple=[1, 2])
    assert md == expected
    assert type(md["flag"]) is bool and type(md["count"]) is int
    loaded = hrry.load_file(path)
    for name, array in tensors.items():
        assert_same(loaded[name], array)


def test_big_endian_and_non_contiguous_inputs(tmp_path):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    inputs = {
        "be_f8": base.astype(">f8"),
        "be_i4": np.arange(-5, 5, dtype=">i4"),
        "be_c8": (base + 1j).astype(">c8"),
        "transposed": base.T,
        "strided": base[::2, ::3],
        "fortran": np.asfortranarray(base),
    }
    path = tmp_path / "b.hrry"
    hrry.save_file(inputs, path)
    loaded = hrry.load_file(path)
    for name, array in inputs.items():
        want = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<")))
        assert_same(loaded[name], want)
        assert np.array_equal(loaded[name], array)


def test_quantized_tensors_save_next_to_arrays(tmp_path):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((8, 64)).astype(np.float32)
    q = hrry.quantize(w, "int8", 32)
    path = tmp_path / "q.hrry"
    hrry.save_file({"a": w, "q": q, "b": w[:2]}, path)
    with hrry.open(path) as f:
        assert f.keys() == ["a", "q", "b"]
        info = f.info("q")
        assert info["dtype"] == "int8" and info["shape"] == (8, 64)
        assert info["quantization"]["scheme"] == "per-block affine"
        assert info["quantization"]["block_size"] == 32
        assert info["quantization"]["axis"] == 1
        assert info["quantization"]["symmetric"] is True
        assert info["quantization"]["scale_type"] == "float16"
        assert info["buffers"] == [8 * 64, 8 * 2 * 2]
        assert_same(f.dequantize("q"), q.dequantize())
        assert_same(f.get_tensor("q"), q.dequantize())


def test_refusals(tmp_path):
    path = tmp_path / "r.hrry"
    with pytest.raises(TypeError):
        hrry.save_file({"o": np.array([object()], dtype=object)}, path)
    with pytest.raises(TypeError):
        hrry.save_file({"s": np.array(["text"])}, path)
    with pytest.raises(TypeError):
        hrry.save_file({"d": np.array(["2020-01-01"], dtype="datetime64[D]")}, path)
    with pytest.raises(TypeError):
        hrry.save_file({1: np.zeros(2)}, path)
    with pytest.raises(TypeError):
        hrry.save_file({"x": np.zeros(2)}, path, metadata={"k": None})
    with pytest.raises(TypeError):
        hrry.save_file({"x": np.zeros(2)}, path, metadata={"k": [1, "a"]})
    with pytest.raises(TypeError):
        hrry.save_file({"x": np.zeros(2)}, path, metadata={3: "a"})
    with pytest.raises(OverflowError):
        hrry.save_file({"x": np.zeros(2)}, path, metadata={"k": 2**64})
    with pytest.raises(OverflowError):
        hrry.save_file({"x": np.zeros(2)}, path, metadata={"k": [-1, 2**63]})
    with pytest.raises(hrry.HrryError):
        hrry.save_file({"": np.zeros(2)}, path)
    assert not path.exists()


def test_save_is_atomic(tmp_path):
    path = tmp_path / "a.hrry"
    hrry.save_file({"x": np.arange(3)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        hrry.save_file({"y": np.arange(3), "z": np.array([None])}, path)
    assert path.read_bytes() == before
    with pytest.raises(hrry.HrryError):
        hrry.save_file({"ok": np.arange(3), "": np.arange(2)}, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["a.hrry"]
    with pytest.raises(OSError):
        hrry.save_file({"x": np.arange(3)}, tmp_path / "missing" / "x.hrry")


def test_torch_style_sharing(tmp_path):
    path = tmp_path / "t.hrry"
    hrry.save_file({"x": np.arange(12, dtype=np.float32).reshape(3, 4)}, path)
    arr = hrry.load_file(path)["x"]
    # What torch.from_numpy relies on: the array interface of a C-contiguous array.
    iface = arr.__array_interface__
    # Writeable (a private copy-on-write mapping): the read-only flag is clear.
    assert iface["strides"] is None and iface["data"][1] is False
    assert arr.flags.c_contiguous


def test_torch_from_numpy_shares_the_view(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.hrry"
    hrry.save_file({"x": np.arange(6, dtype=np.float32)}, path)
    with hrry.open(path) as f:
        arr = f.get_tensor("x")
    with pytest.warns(UserWarning):  # torch warns that the array is not writeable
        t = torch.from_numpy(arr)
    assert t.data_ptr() == arr.__array_interface__["data"][0]
    assert t.tolist() == arr.tolist()
