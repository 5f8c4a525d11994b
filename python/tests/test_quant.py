"""quantize → save_file → dequantize, against the CLI and across threads."""

import threading

import numpy as np
import pytest

import hrry
from conftest import run_hrry


@pytest.mark.parametrize("scheme", ["int4", "int8", "uint4", "uint8", "int2", "uint2"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_quantize_round_trip(scheme, symmetric, tmp_path, hrry_bin):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 96)).astype(np.float32)
    try:
        q = hrry.quantize(w, scheme, 32, symmetric=symmetric)
    except hrry.HrryError:
        # The core refuses some combinations; they must be refusals, not crashes.
        assert scheme.startswith("u") and symmetric
        return
    assert q.shape == (6, 96) and q.scheme == scheme and q.block_size == 32
    assert q.axis == 1 and q.symmetric is symmetric and q.scale_dtype == "float16"
    values = q.dequantize()
    assert values.dtype == np.float32 and values.shape == w.shape
    bits = int(scheme.lstrip("uint"))
    if scheme.startswith("int") or not symmetric:
        # Error within one quantization step of the block range. (Symmetric
        # unsigned storage cannot hold negative values: they clamp to zero.)
        step = (np.abs(w).max() * 2) / (2**bits - 1)
        assert np.abs(values - w).max() <= step * 1.01 + 1e-6
    else:
        assert np.array_equal(values[w <= 0], np.zeros_like(values[w <= 0]))
    path = tmp_path / "q.hrry"
    hrry.save_file({"q": q}, path)
    with hrry.open(path) as f:
        got = f.dequantize("q")
        assert got.tobytes() == values.tobytes()
        out = np.empty((6, 96), dtype=np.float32)
        assert f.dequantize("q", out=out) is out
        assert out.tobytes() == values.tobytes()
    cli = tmp_path / "cli.npy"
    done = run_hrry("dequant", str(path), "q", "-o", str(cli))
    assert done.returncode == 0, done.stderr
    assert np.load(cli).tobytes() == values.tobytes()


def test_quantize_options_and_refusals():
    w = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    q = hrry.quantize(w, "int8", 16, scale_dtype="float32")
    assert q.scale_dtype == "float32" and q.nbytes == 4 * 64 + 4 * 4 * 4
    q0 = hrry.quantize(w.T.copy(), "int4", 2, axis=0, scale_dtype="bfloat16")
    assert q0.axis == 0 and q0.shape == (64, 4)
    assert np.abs(q0.dequantize() - w.T).max() < 0.2
    # Inputs are converted to float32; lists work.
    assert np.allclose(hrry.quantize([[1.0, -1.0]], "int8", 2).dequantize(), [[1.0, -1.0]], atol=1e-3)
    for bad in (
        lambda: hrry.quantize(w, "float8", 32),
        lambda: hrry.quantize(w, "int4", 3),
        lambda: hrry.quantize(w, "int4", 128),
        lambda: hrry.quantize(w, "int4", 32, axis=2),
        lambda: hrry.quantize(np.float32(1), "int4", 32),
        lambda: hrry.quantize(w, "int4", 32, scale_dtype="int8"),
    ):
        with pytest.raises(ValueError):
            bad()


def test_dequantize_out_is_checked(tmp_path):
    w = np.ones((4, 32), dtype=np.float32)
    path = tmp_path / "o.hrry"
    hrry.save_file({"q": hrry.quantize(w, "int8", 32), "plain": w}, path)
    with hrry.open(path) as f:
        with pytest.raises(TypeError):
            f.dequantize("q", out=np.empty((4, 32), dtype=np.float64))
        with pytest.raises(TypeError):
            f.dequantize("q", out=[0.0] * 128)
        with pytest.raises(ValueError):
            f.dequantize("q", out=np.empty((4, 33), dtype=np.float32))
        with pytest.raises(ValueError):
            f.dequantize("q", out=np.empty((32, 4), dtype=np.float32).T)
        ro = np.empty((4, 32), dtype=np.float32)
        ro.setflags(write=False)
        with pytest.raises(ValueError):
            f.dequantize("q", out=ro)
        # A read-only view of the file is not a valid output either.
        with pytest.raises(ValueError):
            f.dequantize("q", out=f.get_tensor("plain"))


def test_threads_argument_splits_large_tensors_without_changing_bits(tmp_path):
    # Over a million values: large enough that one call splits into several parts.
    rng = np.random.default_rng(5)
    tensors = {
        "i4": hrry.quantize(rng.standard_normal((1100, 1024)).astype(np.float32), "int4", 32),
        "i8": hrry.quantize(
            rng.standard_normal((1031, 1003)).astype(np.float32), "int8", 32, symmetric=False
        ),
    }
    path = tmp_path / "split.hrry"
    hrry.save_file(tensors, path)
    with hrry.open(path) as f:
        for name, q in tensors.items():
            want = q.dequantize(threads=1)
            assert q.dequantize().tobytes() == want.tobytes()
            for threads in (None, 1, 2, 3, 7):
                assert f.dequantize(name, threads=threads).tobytes() == want.tobytes(), threads
                out = np.full(want.shape, np.nan, dtype=np.float32)
                assert f.dequantize(name, out=out, threads=threads) is out
                assert out.tobytes() == want.tobytes(), threads
            with pytest.raises(ValueError, match="threads"):
                f.dequantize(name, threads=0)
            with pytest.raises(ValueError, match="threads"):
                q.dequantize(threads=0)
            with pytest.raises(OverflowError):
                f.dequantize(name, threads=-1)


def test_threads_dequantize_in_parallel(tmp_path):
    rng = np.random.default_rng(4)
    tensors = {}
    for i, scheme in enumerate(["int4", "int8"] * 3):
        tensors[f"t{i}"] = hrry.quantize(rng.standard_normal((256, 1024)).astype(np.float32), scheme, 32)
    path = tmp_path / "threads.hrry"
    hrry.save_file(tensors, path)
    expected = {name: q.dequantize() for name, q in tensors.items()}
    errors = []
    with hrry.open(path) as f:
        barrier = threading.Barrier(6)

        def work(k):
            try:
                barrier.wait()
                for r in range(5):
                    name = f"t{(k + r) % 6}"
                    if r % 2:
                        got = f.dequantize(name)
                    else:
                        got = np.empty((256, 1024), dtype=np.float32)
                        f.dequantize(name, out=got)
                    if got.tobytes() != expected[name].tobytes():
                        errors.append((k, name))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append((k, repr(e)))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_close_while_other_threads_read(tmp_path):
    path = tmp_path / "c.hrry"
    hrry.save_file({"q": hrry.quantize(np.ones((512, 512), np.float32), "int8", 32)}, path)
    f = hrry.open(path)
    results = []

    def reader():
        for _ in range(20):
            try:
                results.append(f.dequantize("q").shape)
            except ValueError as e:
                results.append("closed" if "closed" in str(e) else repr(e))

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    f.close()
    for t in threads:
        t.join()
    assert set(results) <= {(512, 512), "closed"}
