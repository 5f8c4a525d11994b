"""NumPy without widening: `get_tensor(name, widen=False)` and
`load_file(path, widen=False)` give bfloat16, float8, float6 and float4 tensors as
ml_dtypes arrays of the stored codes (views into the mapping where the stored bytes
are the array), a clear error naming ml_dtypes without it; `save_file` stores
ml_dtypes arrays bit for bit."""

import os
import subprocess
import sys

import numpy as np
import pytest

import hrry
from conftest import CORPUS, mapped_ranges, optional, same_floats

ml_dtypes = optional("ml_dtypes")

ALL_TYPES = os.path.join(CORPUS, "valid", "all_element_types.hrry")
# Element type -> the ml_dtypes dtype widen=False gives, and whether the stored
# bytes are the array (a view; the narrower ones are unpacked to a byte each).
KEPT = {
    "bfloat16": (ml_dtypes.bfloat16, True),
    "float8_e4m3": (ml_dtypes.float8_e4m3fn, True),
    "float8_e5m2": (ml_dtypes.float8_e5m2, True),
    "float8_e8m0": (ml_dtypes.float8_e8m0fnu, True),
    "float6_e2m3": (ml_dtypes.float6_e2m3fn, False),
    "float6_e3m2": (ml_dtypes.float6_e3m2fn, False),
    "float4_e2m1": (ml_dtypes.float4_e2m1fn, False),
}


def inside_mapping(array, path):
    ptr = array.__array_interface__["data"][0]
    return any(s <= ptr and ptr + array.nbytes <= e for s, e in mapped_ranges(path))


def test_every_kept_type_comes_out_as_its_ml_dtypes_dtype():
    seen = set()
    with hrry.open(ALL_TYPES) as f:
        for name in f.keys():
            kind = f.info(name)["dtype"]
            if kind not in KEPT:
                if kind not in ("float128", "extension"):
                    # Every other type: the same array either way.
                    plain, kept = f.get_tensor(name), f.get_tensor(name, widen=False)
                    assert kept.dtype == plain.dtype and kept.tobytes() == plain.tobytes()
                continue
            seen.add(kind)
            dtype, viewed = KEPT[kind]
            kept = f.get_tensor(name, widen=False)
            assert kept.dtype == dtype, (kind, kept.dtype)
            same_floats(kept, f.get_tensor(name))
            assert inside_mapping(kept, ALL_TYPES) == viewed, kind
    assert seen == set(KEPT)


def test_load_file_without_widening(tmp_path):
    with hrry.open(ALL_TYPES) as f:
        kinds = {n: f.info(n)["dtype"] for n in f.keys()}
        float128 = next(n for n, k in kinds.items() if k == "float128")
        with pytest.raises(hrry.HrryError, match="float128"):
            f.get_tensor(float128, widen=False)
        # Every type save_file stores (so not float128, the extension type, float6
        # or float4), the kept ones as ml_dtypes arrays.
        stored = {
            n: f.get_tensor(n, widen=False)
            for n, k in kinds.items()
            if k not in ("float128", "extension") and KEPT.get(k, (None, True))[1]
        }
    with pytest.raises(hrry.HrryError, match="float128"):
        hrry.load_file(ALL_TYPES, widen=False)
    path = tmp_path / "kept.hrry"
    hrry.save_file(stored, path)
    loaded = hrry.load_file(path, widen=False)
    assert list(loaded) == list(stored)
    assert {kinds[n] for n in stored} >= {"bfloat16", "float8_e4m3", "float8_e5m2", "float8_e8m0"}
    for name, want in stored.items():
        assert loaded[name].dtype == want.dtype and loaded[name].tobytes() == want.tobytes()
        if kinds[name] in KEPT:
            assert loaded[name].dtype == KEPT[kinds[name]][0]


def test_without_ml_dtypes_the_error_names_it(tmp_path):
    plain = tmp_path / "plain.hrry"
    hrry.save_file({"x": np.arange(3, dtype=np.float32)}, plain)
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import hrry\n"
        f"assert hrry.load_file({str(plain)!r}, widen=False)['x'].tolist() == [0, 1, 2]\n"
        f"f = hrry.open({ALL_TYPES!r})\n"
        "name = next(n for n in f.keys() if f.info(n)['dtype'] == 'bfloat16')\n"
        "try:\n"
        "    f.get_tensor(name, widen=False)\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "ml_dtypes" in done.stdout and "bfloat16" in done.stdout


def test_save_file_stores_ml_dtypes_arrays_bit_for_bit(tmp_path):
    rng = np.random.default_rng(3)
    arrays = {
        "bf16": rng.integers(0, 1 << 16, (5, 3), dtype=np.uint16).view(ml_dtypes.bfloat16),
        "e4m3": rng.integers(0, 256, (7,), dtype=np.uint8).view(ml_dtypes.float8_e4m3fn),
        "e5m2": rng.integers(0, 256, (2, 2), dtype=np.uint8).view(ml_dtypes.float8_e5m2),
        "e8m0": rng.integers(0, 256, (4,), dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu),
    }
    path = tmp_path / "ml.hrry"
    hrry.save_file(arrays, path)
    assert hrry.validate(path).valid
    with hrry.open(path) as f:
        assert [f.info(n)["dtype"] for n in arrays] == ["bfloat16", "float8_e4m3", "float8_e5m2", "float8_e8m0"]
        for name, want in arrays.items():
            got = f.get_tensor(name, widen=False)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    with pytest.raises(TypeError, match="float4_e2m1fn"):
        hrry.save_file({"f4": np.zeros(2, dtype=ml_dtypes.float4_e2m1fn)}, tmp_path / "f4.hrry")
