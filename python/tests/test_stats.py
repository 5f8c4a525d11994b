"""Statistics (`File.stats()`, `hrry.stats`) equal NumPy's on every tensor of every
valid corpus file, and `hrry.diff` compares files of any format on their values."""

import numpy as np
import pytest

import hrry
import hrry.stream
from conftest import corpus_path, entry_ids, manifest_entries

VALID_HRRY = [e for e in manifest_entries() if e["valid"] and e["format"] == "hrryfile"]


def as_values(a):
    """The values statistics count, as float64: a complex number's two parts each."""
    if np.iscomplexobj(a):
        a = np.ascontiguousarray(a).view(a.real.dtype)
    return np.asarray(a).astype(np.float64).ravel()


def close(got, want):
    scale = max(1.0, abs(want))
    return abs(got - want) <= 1e-9 * scale


@pytest.mark.parametrize("entry", VALID_HRRY, ids=entry_ids(VALID_HRRY))
def test_statistics_equal_numpy(entry):
    path = corpus_path(entry)
    with hrry.open(path) as f:
        stats = f.stats()
        assert _equal_with_nan(stats, hrry.stats(path))
        assert sorted(stats["tensors"]) == sorted(f.keys())
        total = sum(p["elements"] for p in stats["parameters"])
        assert total == sum(int(np.prod(f.info(n)["shape"])) for n in f.keys())
        for name in f.keys():
            s = stats["tensors"][name]
            try:
                values = as_values(f.get_tensor(name))
            except hrry.HrryError:
                assert "error" in s, (name, s)
                continue
            assert "error" not in s, (name, s)
            finite = values[np.isfinite(values)]
            assert s["count"] == values.size
            assert s["nan"] == int(np.isnan(values).sum())
            assert s["inf"] == int(np.isinf(values).sum())
            assert s["zeros"] == int((finite == 0).sum())
            if finite.size == 0:
                assert np.isnan(s["min"]) and np.isnan(s["mean"])
                continue
            assert s["min"] == finite.min() and s["max"] == finite.max()
            assert close(s["mean"], finite.mean()), (name, s["mean"], finite.mean())
            assert close(s["std"], finite.std()), (name, s["std"], finite.std())
            h = s["histogram"]
            assert h["low"] == finite.min() and h["high"] == finite.max()
            assert sum(h["counts"]) == finite.size  # small tensors: every value sampled


def _equal_with_nan(a, b):
    """Dict equality where NaN equals NaN."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal_with_nan(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal_with_nan(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def test_diff_compares_values_across_formats(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    w = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    b = np.arange(5, dtype=np.int64) - 2
    st = tmp_path / "m.safetensors"
    safetensors_numpy.save_file({"w": w, "b": b}, str(st), metadata={"format": "np"})
    hr = tmp_path / "m.hrry"
    hrry.save_file({"w": w, "b": b}, str(hr), metadata={"format": "np"})
    d = hrry.diff(st, str(hr))
    assert d["equal"] and d["equal_tensors"] == 2 and d["values_compared"]
    assert hrry.diff(st, hr, metadata_only=True)["equal"]

    w2 = w.copy()
    w2[2, 3] += 0.5
    other = tmp_path / "o.hrry"
    hrry.save_file({"w": w2, "c": b}, str(other), metadata={"format": "pt"})
    d = hrry.diff(hr, other)
    assert not d["equal"]
    assert d["only_in_a"] == ["b"] and d["only_in_b"] == ["c"]
    v = d["tensors"][0]["values"]
    assert v["first_index"] == 15 and v["first_position"] == [2, 3]
    assert v["differing"] == 1 and abs(v["max_abs_diff"] - 0.5) < 1e-6
    assert d["metadata"] == [{"key": "format", "change": "changed", "a": "np", "b": "pt"}]
    loose = hrry.diff(hr, other, tolerance=0.6)
    assert loose["tensors"] == [] and loose["equal_tensors"] == 1
    with pytest.raises(ValueError):
        hrry.diff(hr, other, tolerance=-1.0)
    with pytest.raises(OSError):
        hrry.diff(hr, tmp_path / "missing.hrry")


def test_diff_and_stats_read_streams_and_archives(tmp_path):
    """A bare stream compares equal to its unpacked HRRYFILE and has its statistics;
    a `.holo` archive opens as the HRRYFILEs inside it (none in full.holo) plus the
    archive's own sections, and equals itself."""
    stream = corpus_path({"path": "stream/valid/basic.hrrys"})
    unpacked = tmp_path / "basic.hrry"
    count = hrry.stream.unpack(stream, unpacked)
    assert count > 0
    d = hrry.diff(stream, unpacked)
    assert d["equal"] and d["equal_tensors"] == count, d
    with hrry.open(unpacked) as f:
        assert sorted(hrry.stats(stream)["tensors"]) == sorted(f.keys())

    archive = corpus_path({"path": "valid/full.holo"})
    assert hrry.diff(archive, archive)["equal"]
    assert not hrry.diff(archive, unpacked)["equal"]
