"""`hrry.validate` over binary file objects (seek/read): the same reports as for the
path, reading only what the rules need, and a clear Python exception — never a
verdict, never a crash — for an object that raises or misbehaves."""

import io
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import hrry
from conftest import corpus_path, entry_ids, manifest_entries, without_source

ENTRIES = manifest_entries()


class Counting(io.RawIOBase):
    """A file read through seek/read only, counting the bytes `read` returns."""

    def __init__(self, path, chunk=None):
        self.f = open(path, "rb")
        self.bytes_read = 0
        self.calls = 0
        self.chunk = chunk  # at most this many bytes per read (short reads)

    def seekable(self):
        return True

    def readable(self):
        return True

    def seek(self, offset, whence=0):
        return self.f.seek(offset, whence)

    def tell(self):
        return self.f.tell()

    def read(self, n=-1):
        if self.chunk is not None and n > self.chunk:
            n = self.chunk
        data = self.f.read(n)
        self.calls += 1
        self.bytes_read += len(data)
        return data

    def close(self):
        self.f.close()
        super().close()


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_ids(ENTRIES))
def test_file_objects_give_the_path_report(entry):
    path = corpus_path(entry)
    want = hrry.validate(path)
    with open(path, "rb") as f:
        got = hrry.validate(f)
    assert without_source(got) == without_source(want)
    assert got.file == path  # an open file's name
    with open(path, "rb") as f:
        data = f.read()
    # Without a name, the format is told by the magic alone, as for bytes.
    got = hrry.validate(io.BytesIO(data))
    assert without_source(got) == without_source(hrry.validate(data))
    assert got.file == "<BytesIO object>"


def test_short_reads_are_read_again():
    entry = next(e for e in ENTRIES if e["valid"] and e["format"] == "hrryfile")
    path = corpus_path(entry)
    f = Counting(path, chunk=7)
    got = hrry.validate(f)
    assert without_source(got) == without_source(hrry.validate(path))
    assert f.calls > 1 and got.remote["requests"] == f.calls


@pytest.fixture(scope="module")
def large_file(tmp_path_factory):
    """A 64 MiB float32 matrix and a few small tensors, with metadata."""
    path = str(tmp_path_factory.mktemp("large") / "large.hrry")
    rng = np.random.default_rng(7)
    tensors = {
        "embedding": np.ones((4096, 4096), dtype=np.float32),
        "bias": rng.standard_normal(4096).astype(np.float32),
        "ids": np.arange(1000, dtype=np.int64),
    }
    hrry.save_file(tensors, path, metadata={"producer": "test_fileobj"})
    return path


def test_validation_reads_only_the_metadata(large_file):
    size = os.path.getsize(large_file)
    assert size > 64 << 20
    f = Counting(large_file)
    report = hrry.validate(f)
    assert report.valid
    assert without_source(report) == without_source(hrry.validate(large_file))
    # The rules read the header, trailer, index, KV and descriptors (and a few data
    # bytes), never the 64 MiB of data.
    assert f.bytes_read < 256 << 10, f.bytes_read
    assert report.remote == {"requests": f.calls, "bytes": f.bytes_read, "retries": 0}


def test_concurrent_validations_share_the_interpreter(large_file):
    # Each validation releases the interpreter and takes it back for every read:
    # threads validating at once all finish with the right verdict.
    paths = [large_file] + [corpus_path(e) for e in ENTRIES[:20]]
    want = [without_source(hrry.validate(p)) for p in paths]

    def run(p):
        with open(p, "rb") as f:
            return without_source(hrry.validate(f))

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, paths * 3)) == want * 3


class Raising(Counting):
    def __init__(self, path, after, chunk=1000):
        super().__init__(path, chunk)
        self.after = after

    def read(self, n=-1):
        if self.calls >= self.after:
            raise ConnectionResetError("the object store went away")
        return super().read(n)


def test_a_raising_read_is_raised_not_judged(large_file):
    for after in range(0, 6):
        with pytest.raises(ConnectionResetError, match="object store went away"):
            hrry.validate(Raising(large_file, after))


class Truncating(Counting):
    """Claims the file's full length but its reads end early."""

    def __init__(self, path, keep):
        super().__init__(path)
        self.keep = keep

    def read(self, n=-1):
        left = self.keep - self.f.tell()
        return super().read(max(0, min(n, left)))


def test_a_file_that_ends_early_is_an_error(large_file):
    size = os.path.getsize(large_file)
    for keep in (0, 100, size - 1000, size - 1):
        with pytest.raises(OSError, match="ended at offset"):
            hrry.validate(Truncating(large_file, keep))


class TooLong(Counting):
    def read(self, n=-1):
        return super().read(n) + b"x"


def test_misbehaving_objects_raise_clearly(large_file):
    with pytest.raises(ValueError, match=r"returned \d+ bytes"):
        hrry.validate(TooLong(large_file))
    with open(large_file, "r", encoding="latin-1") as text:
        with pytest.raises(TypeError, match="binary mode"):
            hrry.validate(text)

    class NotSeekable(Counting):
        def seekable(self):
            return False

    with pytest.raises(TypeError, match="not seekable"):
        hrry.validate(NotSeekable(large_file))

    class NoneRead(Counting):
        def read(self, n=-1):
            return None

    with pytest.raises(ValueError, match="non-blocking"):
        hrry.validate(NoneRead(large_file))

    class SeekRaises(Counting):
        def seek(self, offset, whence=0):
            if whence == 0 and offset > 0:
                raise OSError(5, "seek failed")
            return super().seek(offset, whence)

    with pytest.raises(OSError, match="seek failed"):
        hrry.validate(SeekRaises(large_file))
    with pytest.raises(TypeError, match="binary file object"):
        hrry.validate(12)


HOLO = [e for e in ENTRIES if e["format"] == "holo"]


def archive_contents(archive):
    return (
        archive.format_version,
        archive.fingerprint,
        [(s.kind, s.offset, s.length, bytes(s.data)) for s in archive.sections],
        {k: bytes(v) for k, v in archive.weights.items()},
        archive.inputs,
        archive.outputs,
    )


def holo_outcome(source):
    """What hrry.holo.open makes of `source`: the contents, or the violations."""
    try:
        with hrry.holo.open(source) as archive:
            return archive_contents(archive)
    except hrry.InvalidFileError as e:
        return e.violations


@pytest.mark.parametrize("entry", HOLO, ids=entry_ids(HOLO))
def test_holo_archives_from_file_objects(entry):
    path = corpus_path(entry)
    want = holo_outcome(path)
    assert (want and not isinstance(want, list)) == entry["valid"]
    with open(path, "rb") as f:
        assert holo_outcome(f) == want
    with open(path, "rb") as f:
        assert holo_outcome(f.read()) == want


def test_holo_from_a_raising_file_object():
    path = max((corpus_path(e) for e in HOLO if e["valid"]), key=os.path.getsize)
    counting = Counting(path, chunk=1000)
    hrry.holo.open(counting).close()
    assert counting.calls > 1
    for after in range(counting.calls):
        with pytest.raises(ConnectionResetError):
            hrry.holo.open(Raising(path, after))
    with pytest.raises(OSError, match="ended at offset"):
        hrry.holo.open(Truncating(path, os.path.getsize(path) - 1))
