"""hrry.stream: reading bare streams (paths, bytes, file objects, pipes) into the
arrays `File.get_tensor` gives, writing them, pack/unpack against the CLI's bytes,
validation, and hostile input raising InvalidFileError with the stream's rules."""

import io
import os
import random
import threading

import numpy as np
import pytest

import hrry
import hrry.stream
from conftest import corpus_path, entry_ids, manifest_entries, run_hrry

ENTRIES = manifest_entries()
VALID_STREAMS = [e for e in ENTRIES if e["valid"] and e["format"] == "stream"]
INVALID_STREAMS = [e for e in ENTRIES if not e["valid"] and e["format"] == "stream"]
VALID_HRRY = [e for e in ENTRIES if e["valid"] and e["format"] == "hrryfile"]


def same_array(got, want):
    """Equal dtype, shape and bytes (so NaN payloads and -0.0 count)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def check_against_unpacked(items, stream_path, tmp_path):
    """Each item equals what the CLI's unpack of the same stream gives under the
    same name: info, and array (or none where get_tensor cannot give one)."""
    unpacked = tmp_path / "unpacked.hrry"
    done = run_hrry("stream", "unpack", str(stream_path), "-o", str(unpacked))
    assert done.returncode == 0, done.stderr
    with hrry.open(unpacked) as f:
        assert [t.name for t in items] == f.keys()
        for t in items:
            assert t.info == f.info(t.name)
            assert [len(b) for b in t.buffers] == list(t.info["buffers"])
            if t.array is None:
                # Composite heads have their members' values; the rest have none.
                if t.info["layout"] != "composite":
                    with pytest.raises(hrry.HrryError):
                        f.get_tensor(t.name)
                continue
            same_array(t.array, f.get_tensor(t.name))


def test_corpus_has_streams():
    assert len(VALID_STREAMS) >= 5 and len(INVALID_STREAMS) >= 5


@pytest.mark.parametrize("entry", VALID_STREAMS, ids=entry_ids(VALID_STREAMS))
def test_valid_stream_reads(entry, hrry_bin, tmp_path):
    path = corpus_path(entry)
    items = list(hrry.stream.StreamReader(path))
    check_against_unpacked(items, path, tmp_path)
    # Bytes and a file object give the same tensors.
    with open(path, "rb") as f:
        data = f.read()
    from_bytes = list(hrry.stream.StreamReader(data))
    with open(path, "rb") as f:
        from_file = list(hrry.stream.StreamReader(f))
    for a, b, c in zip(items, from_bytes, from_file):
        assert a.name == b.name == c.name and a.buffers == b.buffers == c.buffers
    assert len(items) == len(from_bytes) == len(from_file)
    report = hrry.stream.validate(path)
    assert report.valid and report.format == "stream", report.violations
    loaded = hrry.stream.read(data)
    assert list(loaded) == [t.name for t in items if t.array is not None]


@pytest.mark.parametrize("entry", INVALID_STREAMS, ids=entry_ids(INVALID_STREAMS))
def test_invalid_stream_raises(entry):
    path = corpus_path(entry)
    with pytest.raises(hrry.InvalidFileError) as caught:
        for _ in hrry.stream.StreamReader(path):
            pass
    assert entry["rule"] in [v.rule for v in caught.value.violations]
    report = hrry.stream.validate(path)
    assert not report.valid and entry["rule"] in report.rule_ids()


@pytest.mark.parametrize("entry", VALID_HRRY, ids=entry_ids(VALID_HRRY))
def test_pack_equals_cli(entry, hrry_bin, tmp_path):
    path = corpus_path(entry)
    cli = tmp_path / "cli.hrrys"
    done = run_hrry("stream", "pack", path, "-o", str(cli))
    if done.returncode != 0:
        with pytest.raises(hrry.HrryError):
            hrry.stream.pack(path, tmp_path / "py.hrrys")
        assert not (tmp_path / "py.hrrys").exists()
        return
    want = cli.read_bytes()
    # To a path, and to a file object.
    count = hrry.stream.pack(path, tmp_path / "py.hrrys")
    assert (tmp_path / "py.hrrys").read_bytes() == want
    sink = io.BytesIO()
    assert hrry.stream.pack(path, sink) == count
    assert sink.getvalue() == want
    with hrry.open(path) as f:
        assert count == len(f)
    items = list(hrry.stream.StreamReader(want))
    assert len(items) == count
    check_against_unpacked(items, cli, tmp_path)
    # unpack mirrors the CLI's: the same file, byte for byte.
    cli_file = tmp_path / "cli.hrry"
    assert run_hrry("stream", "unpack", str(cli), "-o", str(cli_file)).returncode == 0
    assert hrry.stream.unpack(want, tmp_path / "py.hrry") == count
    assert (tmp_path / "py.hrry").read_bytes() == cli_file.read_bytes()


DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "uint16",
          "int32", "uint32", "int64", "uint64", "complex64", "complex128", "bool"]


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def test_round_trip_dtypes(tmp_path):
    arrays = [sample(d, (3, 5 + i), i) for i, d in enumerate(DTYPES)]
    arrays.append(np.arange(24, dtype=">i4").reshape(2, 3, 4))  # big-endian
    arrays.append(np.arange(12.0).reshape(3, 4).T)  # not contiguous
    arrays.append(np.float32(2.5))  # rank 0
    arrays.append(np.zeros((0, 3), dtype="int16"))  # empty
    path = tmp_path / "out.hrrys"
    with hrry.stream.StreamWriter(path) as w:
        for a in arrays:
            w.write(a)
        assert w.position > 0
    data = path.read_bytes()
    reader = hrry.stream.StreamReader(data)
    items = list(reader)
    assert reader.position == len(data) and next(reader, None) is None
    assert [t.name for t in items] == [f"t{i}" for i in range(len(arrays))]
    for t, a in zip(items, arrays):
        want = np.asarray(a)
        assert t.array.shape == want.shape
        assert np.array_equal(t.array, want)
        assert t.array.dtype == want.dtype.newbyteorder("<") or t.array.dtype == want.dtype
    assert hrry.stream.validate(data).valid
    # The same tensors through save_file and pack give the same stream.
    hrry.save_file({f"a{i}": a for i, a in enumerate(arrays)}, tmp_path / "f.hrry")
    sink = io.BytesIO()
    hrry.stream.pack(tmp_path / "f.hrry", sink)
    assert sink.getvalue() == data


def test_write_tensor_and_quantized(tmp_path):
    src = corpus_path({"path": "valid/layout-csr.hrry"})
    q = hrry.quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), "int4")
    sink = io.BytesIO()
    with hrry.open(src) as f, hrry.stream.StreamWriter(sink) as w:
        names = f.keys()
        for name in names:
            w.write_tensor(f, name)
        w.write(q)
        with pytest.raises(KeyError):
            w.write_tensor(f, "no such tensor")
    items = list(hrry.stream.StreamReader(sink.getvalue()))
    assert len(items) == len(names) + 1
    with hrry.open(src) as f:
        for t, name in zip(items, names):
            same_array(t.array, f.get_tensor(name))
    assert items[-1].info["quantization"]["scheme"] == "per-block affine"
    same_array(items[-1].array, q.dequantize())


def test_read_through_pipe():
    arrays = [np.arange(300_000, dtype=np.float32).reshape(600, 500),
              np.arange(10, dtype=np.int64)]
    r, w = os.pipe()

    def produce():
        with os.fdopen(w, "wb") as sink:
            with hrry.stream.StreamWriter(sink) as sw:
                for a in arrays:
                    sw.write(a)

    producer = threading.Thread(target=produce)
    producer.start()
    try:
        with os.fdopen(r, "rb", buffering=0) as source:
            items = list(hrry.stream.StreamReader(source))
    finally:
        producer.join()
    assert len(items) == 2
    for t, a in zip(items, arrays):
        assert np.array_equal(t.array, a)


def test_unpack_and_validate_from_pipe(tmp_path):
    data = (tmp_path / "s.hrrys")
    hrry.stream.pack(corpus_path({"path": "valid/basic.hrry"}), data)
    want = data.read_bytes()
    for call in (lambda src: hrry.stream.unpack(src, tmp_path / "u.hrry"),
                 lambda src: hrry.stream.validate(src)):
        r, w = os.pipe()
        t = threading.Thread(target=lambda: os.write(w, want) and os.close(w))
        t.start()
        with os.fdopen(r, "rb") as source:
            result = call(source)
        t.join()
        assert result
    with hrry.open(tmp_path / "u.hrry") as f:
        assert len(f) > 0


def hostile_variants(data, seed):
    rng = random.Random(seed)
    for cut in sorted({1, 7, 19, 20, 21, len(data) // 2, len(data) - 1}):
        if 0 < cut < len(data):
            yield data[:cut]
    for _ in range(40):
        flipped = bytearray(data)
        i = rng.randrange(len(flipped))
        flipped[i] ^= 1 << rng.randrange(8)
        yield bytes(flipped)


@pytest.mark.parametrize("entry", VALID_STREAMS, ids=entry_ids(VALID_STREAMS))
def test_truncated_and_flipped_streams(entry):
    with open(corpus_path(entry), "rb") as f:
        data = f.read()
    if not data:
        return
    raised = 0
    for i, bad in enumerate(hostile_variants(data, entry["size"])):
        try:
            for t in hrry.stream.StreamReader(bad):
                assert t.array is None or t.array.size >= 0
        except hrry.InvalidFileError as e:
            raised += 1
            assert e.violations and all(v.rule for v in e.violations)
        report = hrry.stream.validate(bad)
        if i < 3:
            # The cuts fall inside the stream: always invalid.
            assert not report.valid
    assert raised > 0


def test_truncated_stream_names_st_rule():
    data = io.BytesIO()
    with hrry.stream.StreamWriter(data) as w:
        w.write(np.arange(100, dtype=np.float32))
    whole = data.getvalue()
    cases = {10: "ST-TRN-001", 30: "ST-TRN-002", len(whole) - 4: "ST-TRN-003"}
    for cut, rule in cases.items():
        with pytest.raises(hrry.InvalidFileError) as caught:
            list(hrry.stream.StreamReader(whole[:cut]))
        assert [v.rule for v in caught.value.violations] == [rule]


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError):
        hrry.stream.StreamReader(42)
    with pytest.raises(TypeError):
        hrry.stream.StreamWriter(3.5)
    with pytest.raises(TypeError):
        hrry.stream.validate(None)
    with pytest.raises(FileNotFoundError):
        hrry.stream.StreamReader(tmp_path / "missing.hrrys")
    with pytest.raises(FileNotFoundError):
        hrry.stream.pack(tmp_path / "missing.hrry", io.BytesIO())

    class ReturnsText:
        def read(self, n):
            return "text"

    with pytest.raises(TypeError):
        list(hrry.stream.StreamReader(ReturnsText()))

    class ReturnsTooMuch:
        def read(self, n):
            return b"\0" * (n + 1)

    with pytest.raises(ValueError):
        list(hrry.stream.StreamReader(ReturnsTooMuch()))

    class Fails:
        def read(self, n):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        list(hrry.stream.StreamReader(Fails()))

    w = hrry.stream.StreamWriter(io.BytesIO())
    with pytest.raises(TypeError):
        w.write(np.array([object()]))
    with pytest.raises(TypeError):
        w.write_tensor("not a file", "x")
    w.finish()
    with pytest.raises(ValueError):
        w.write(np.zeros(3))

    class SinkFails:
        def write(self, b):
            raise OSError("disk full")

    w = hrry.stream.StreamWriter(SinkFails())
    with pytest.raises(OSError, match="disk full"):
        w.write(np.zeros(3))
        w.finish()


def test_writer_abandoned_on_exception(tmp_path):
    path = tmp_path / "never.hrrys"
    with pytest.raises(RuntimeError):
        with hrry.stream.StreamWriter(path) as w:
            w.write(np.zeros(3))
            raise RuntimeError("stop")
    assert not path.exists()


def test_max_tensor_bytes():
    data = io.BytesIO()
    with hrry.stream.StreamWriter(data) as w:
        w.write(np.zeros(1000, dtype=np.float64))
    with pytest.raises(hrry.InvalidFileError, match="max_tensor_bytes") as caught:
        list(hrry.stream.StreamReader(data.getvalue(), max_tensor_bytes=4000))
    assert [(v.rule, v.level) for v in caught.value.violations] == [("HF-LIM-001", "limit")]
    assert len(list(hrry.stream.StreamReader(data.getvalue(), max_tensor_bytes=8000))) == 1
