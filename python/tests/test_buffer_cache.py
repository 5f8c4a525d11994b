"""New `dequantize` outputs reuse the memory of freed ones (`set_buffer_cache`)."""

import gc

import numpy as np
import pytest

import hrry

MIB = 1 << 20
SHAPE = (512, 1024)  # 2 MiB of float32 output: over the 1 MiB the cache starts at
NBYTES = SHAPE[0] * SHAPE[1] * 4


@pytest.fixture
def quantized(tmp_path):
    """An open file with two int8 tensors of SHAPE and a small one, and the expected
    values of each; the cache is emptied before and restored after."""
    rng = np.random.default_rng(11)
    tensors = {
        "a": hrry.quantize(rng.standard_normal(SHAPE).astype(np.float32), "int8", 32),
        "b": hrry.quantize(rng.standard_normal(SHAPE).astype(np.float32), "int4", 32),
        "small": hrry.quantize(rng.standard_normal((64, 64)).astype(np.float32), "int8", 32),
    }
    path = tmp_path / "cache.hrry"
    hrry.save_file(tensors, path)
    expected = {name: q.dequantize() for name, q in tensors.items()}
    previous = hrry.set_buffer_cache(0)
    hrry.set_buffer_cache(64 * MIB)
    gc.collect()
    with hrry.open(path) as f:
        yield f, expected
    hrry.set_buffer_cache(0)
    hrry.set_buffer_cache(previous)


def held():
    return hrry.buffer_cache()["held"]


def test_a_freed_output_is_reused_for_the_next_of_its_size(quantized):
    f, expected = quantized
    a = f.dequantize("a")
    assert a.dtype == np.float32 and a.shape == SHAPE
    assert a.flags.writeable and a.flags.c_contiguous and a.flags.aligned
    assert a.ctypes.data % 64 == 0
    address = a.ctypes.data
    assert held() == 0
    a.fill(np.nan)  # the caller may write it; the next output overwrites all of it
    del a
    assert hrry.buffer_cache() == {"limit": 64 * MIB, "held": NBYTES, "buffers": 1}
    # Another tensor of the same size gets the same memory, with its own values.
    b = f.dequantize("b")
    assert b.ctypes.data == address and held() == 0
    assert b.tobytes() == expected["b"].tobytes()
    del b
    a = f.dequantize("a")
    assert a.ctypes.data == address
    assert a.tobytes() == expected["a"].tobytes()


def test_views_keep_the_memory_out_of_the_cache(quantized):
    f, expected = quantized
    a = f.dequantize("a")
    view = a[100:, ::2]
    flat = a.reshape(-1)
    address = a.ctypes.data
    del a
    assert held() == 0  # the views still use it
    b = f.dequantize("a")
    assert b.ctypes.data != address
    b.fill(0.0)
    assert np.array_equal(view, expected["a"][100:, ::2])
    del flat
    assert held() == 0
    del view
    assert held() == NBYTES
    del b
    assert held() == 2 * NBYTES


def test_outputs_outlive_the_file(quantized, tmp_path):
    f, expected = quantized
    a = f.dequantize("a")
    f.close()
    assert a.tobytes() == expected["a"].tobytes()
    del a
    assert held() == NBYTES


def test_the_limit_bounds_what_is_kept_oldest_first(quantized):
    f, expected = quantized
    first, second, third = (f.dequantize(n) for n in ("a", "b", "a"))
    addresses = [x.ctypes.data for x in (first, second, third)]
    assert hrry.set_buffer_cache(2 * NBYTES + NBYTES // 2) == 64 * MIB
    del first, second, third
    assert hrry.buffer_cache()["buffers"] == 2 and held() == 2 * NBYTES
    # The newest freed buffer is reused first; the oldest was dropped.
    x = f.dequantize("a")
    assert x.ctypes.data == addresses[2]
    y = f.dequantize("a")
    assert y.ctypes.data == addresses[1]
    assert x.tobytes() == y.tobytes() == expected["a"].tobytes()
    # Lowering the limit drops what no longer fits; 0 keeps nothing.
    del x, y
    assert held() == 2 * NBYTES
    hrry.set_buffer_cache(NBYTES)
    assert held() == NBYTES
    assert hrry.set_buffer_cache(0) == NBYTES
    assert hrry.buffer_cache() == {"limit": 0, "held": 0, "buffers": 0}
    z = f.dequantize("b")
    assert z.tobytes() == expected["b"].tobytes()
    del z
    assert held() == 0


def test_small_outputs_and_out_arrays_are_not_cached(quantized):
    f, expected = quantized
    s = f.dequantize("small")
    assert s.flags.owndata and s.tobytes() == expected["small"].tobytes()
    del s
    out = np.empty(SHAPE, np.float32)
    assert f.dequantize("a", out=out) is out
    del out
    assert held() == 0


def test_bad_limits_are_refused():
    with pytest.raises(OverflowError):
        hrry.set_buffer_cache(-1)
    with pytest.raises(TypeError):
        hrry.set_buffer_cache("1")
    with pytest.raises(TypeError):
        hrry.set_buffer_cache(None)
