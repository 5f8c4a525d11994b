"""`hrry.open` and `hrry.load_file` over URLs (nginx, s3s-fs on loopback) and file
objects: the tensors, metadata and refusals of the local file, each tensor's bytes
fetched only when it is asked for."""

import io
import os
import threading

import numpy as np
import pytest

import hrry
from conftest import corpus_path, entry_ids, manifest_entries
from test_corpus import same_array
from test_fileobj import Counting, Raising

ENTRIES = manifest_entries()
VALID = [e for e in ENTRIES if e["valid"] and e["format"] == "hrryfile"]
INVALID = [e for e in ENTRIES if not e["valid"] and e["format"] == "hrryfile" and e["size"]]


def contents(f):
    """Everything a File says, each tensor as get_tensor gives it (or the error)."""
    out = {"keys": f.keys(), "metadata": f.metadata, "len": len(f)}
    for name in f.keys():
        info = f.info(name)
        try:
            array = f.get_tensor(name)
        except hrry.HrryError as e:
            array = type(e)
        out[name] = (info, array)
    return out


def same_contents(got, want):
    assert got.keys() == want.keys()
    for key in want:
        if key in ("keys", "metadata", "len"):
            assert got[key] == want[key], key
            continue
        (gi, ga), (wi, wa) = got[key], want[key]
        assert gi == wi, key
        if isinstance(wa, type):
            assert ga is wa, key
        else:
            same_array(ga, wa)


def opened(source):
    with hrry.open(source) as f:
        return contents(f)


def refusal(source, check):
    """The violations `hrry.open` names, or None when it opens the file."""
    try:
        hrry.open(source, check=check).close()
    except hrry.InvalidFileError as e:
        return e.violations
    return None


@pytest.mark.parametrize("entry", VALID, ids=entry_ids(VALID))
def test_valid_files_over_http_and_file_objects(entry, served):
    path = corpus_path(entry)
    want = opened(path)
    same_contents(opened(served.http(path)), want)
    with open(path, "rb") as f:
        same_contents(opened(f), want)
    local = loaded(path, path)
    for source in (served.http(path), io.BytesIO(open(path, "rb").read())):
        name = source if isinstance(source, str) else "<BytesIO object>"
        got = loaded(source, name)
        if isinstance(local, tuple):  # what load_file cannot export
            assert got == local
            continue
        assert list(got) == list(local)
        for tensor, array in got.items():
            same_array(array, local[tensor])
            assert array.flags.writeable, tensor


def loaded(source, name):
    """What load_file gives: the arrays, or the error's type and message (without
    the source's name)."""
    try:
        return hrry.load_file(source)
    except hrry.HrryError as e:
        return type(e), str(e).replace(name, "FILE")


@pytest.mark.parametrize("entry", INVALID, ids=entry_ids(INVALID))
def test_invalid_files_are_refused_alike(entry, served):
    path = corpus_path(entry)
    # check="metadata" opens files that break data rules only; "full" refuses all.
    for check in ("metadata", "full"):
        want = refusal(path, check)
        assert want or check == "metadata"
        assert refusal(served.http(path), check) == want
        with open(path, "rb") as f:
            assert refusal(f, check) == want


@pytest.fixture(scope="module")
def model(served):
    """A 64 MiB matrix, a 16 MiB one and small tensors, where the servers serve it."""
    path = os.path.join(served.scratch("open"), "model.hrry")
    rng = np.random.default_rng(3)
    tensors = {
        "embedding": rng.standard_normal((4096, 4096), dtype=np.float32),
        "output": rng.standard_normal((2048, 2048), dtype=np.float32),
        "norm": np.linspace(0, 1, 4096, dtype=np.float32),
        "q": hrry.quantize(rng.standard_normal((256, 256), dtype=np.float32), "int4"),
    }
    hrry.save_file(tensors, path, metadata={"producer": "test_remote_open"})
    return path


MIB = 1 << 20


def test_tensors_are_fetched_when_asked_for(model, served):
    with hrry.open(model) as local:
        want = {n: local.get_tensor(n) for n in ("norm", "output", "embedding")}
        want_q = local.dequantize("q")
    for url in (served.http(model), served.s3(model)):
        with hrry.open(url) as f:
            assert f.path == url
            opened = f.remote["bytes"]
            assert opened < MIB, f.remote  # the metadata only
            same_array(f.get_tensor("norm"), want["norm"])
            assert f.remote["bytes"] < opened + MIB
            before = f.remote["bytes"]
            same_array(f.get_tensor("output"), want["output"])
            assert 16 * MIB <= f.remote["bytes"] - before < 16 * MIB + 8 * MIB
            before = f.remote["bytes"]
            same_array(f.get_tensor("output"), want["output"])  # kept: no new fetch
            assert f.remote["bytes"] == before
            same_array(f.get_tensor("embedding"), want["embedding"])
            assert 64 * MIB <= f.remote["bytes"] - before < 64 * MIB + 8 * MIB
            same_array(f.dequantize("q"), want_q)
            view = f.get_tensor("embedding")
            assert not view.flags.writeable
        # Arrays outlive the file.
        same_array(view, want["embedding"])


def test_a_file_object_is_read_as_needed(model):
    f = Counting(model)
    with hrry.open(f) as opened:
        assert f.bytes_read < MIB
        assert opened.remote == {"requests": f.calls, "bytes": f.bytes_read, "retries": 0}
        same_array(opened.get_tensor("norm"), hrry.open(model).get_tensor("norm"))
        assert f.bytes_read < MIB
        opened.get_tensor("embedding")
        assert 64 * MIB <= f.bytes_read < 66 * MIB


def test_concurrent_reads_of_one_file_object(model):
    # Threads reading tensors of one File over one file object: each read takes
    # the object's lock before the interpreter, so none deadlocks.
    with hrry.open(model) as local:
        want = {n: local.get_tensor(n) for n in local.keys() if n != "q"}
    with hrry.open(Counting(model)) as f:
        errors = []

        def read(name):
            try:
                same_array(f.get_tensor(name), want[name])
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=read, args=(n,)) for n in want for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads) and not errors, errors


def test_a_file_object_failing_later_raises_its_exception(model):
    f = Raising(model, after=10**9, chunk=1 << 20)
    with hrry.open(f) as opened:
        f.after = f.calls  # every read from now on raises
        with pytest.raises(ConnectionResetError):
            opened.get_tensor("embedding")
        # Nothing wrong was kept: the next try reads again.
        f.after = 10**9
        same_array(opened.get_tensor("embedding"), hrry.open(model).get_tensor("embedding"))


def test_misuse_is_refused(model, served):
    with pytest.raises(ValueError, match="copy_on_write"):
        hrry.open(served.http(model), copy_on_write=True)
    with pytest.raises(FileNotFoundError, match="missing.hrry"):
        hrry.open(served.base + "missing.hrry")
    with pytest.raises(FileNotFoundError, match="missing.hrry"):
        hrry.load_file(served.base + "missing.hrry")
    with pytest.raises(TypeError, match="binary file object"):
        hrry.open(3.5)


def test_an_fsspec_file_opens(model, served):
    from test_remote import http_filesystem

    fs = http_filesystem(served.base)
    with fs.open(served.relative(model), "rb") as raw, hrry.open(raw) as f:
        assert fs.fetched < MIB
        same_array(f.get_tensor("output"), hrry.open(model).get_tensor("output"))
        assert fs.fetched < 16 * MIB + 2 * MIB
