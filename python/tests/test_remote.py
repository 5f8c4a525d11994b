"""`hrry.validate` over URLs (http://, https://, s3://) against real servers on
loopback (nginx and s3s-fs, started by python/run_tests.sh): the reports a local
file gives, in few requests, and errors that name the URL without its secrets;
and an fsspec file (fsspec's own buffered file over HTTP range requests) read as
any file object."""

import os

import numpy as np
import pytest

import hrry
from conftest import corpus_path, entry_ids, manifest_entries, without_source

ENTRIES = manifest_entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_ids(ENTRIES))
def test_the_corpus_over_http(entry, served):
    path = corpus_path(entry)
    want = without_source(hrry.validate(path))
    url = served.http(path)
    got = hrry.validate(url)
    assert without_source(got) == want
    assert got.file == url
    # Every corpus file is shorter than the first (suffix) request.
    assert got.remote == {"requests": 1, "bytes": os.path.getsize(path), "retries": 0}


@pytest.fixture(scope="module")
def large(served):
    """A 64 MiB matrix and a few small tensors, where the servers serve it."""
    path = os.path.join(served.scratch("remote"), "large.hrry")
    tensors = {
        "embedding": np.ones((4096, 4096), dtype=np.float32),
        "bias": np.arange(4096, dtype=np.float32),
    }
    hrry.save_file(tensors, path, metadata={"producer": "test_remote"})
    return path


@pytest.fixture(scope="module")
def large_broken(large, served):
    """`large` with one byte of its index changed."""
    path = os.path.join(served.scratch("remote"), "large-broken.hrry")
    with open(large, "rb") as f:
        data = bytearray(f.read())
    data[-64] ^= 0x21  # in the index: its CRC and an entry break
    with open(path, "wb") as f:
        f.write(data)
    assert not hrry.validate(path).valid
    return path


def test_large_files_over_http_and_s3(large, large_broken, served):
    # s3s-fs 0.14 refuses (500) a suffix range longer than the object, so S3 is
    # tested with files longer than the first request (256 KiB).
    for path in (large, large_broken):
        want = without_source(hrry.validate(path))
        for url in (served.http(path), served.s3(path)):
            got = hrry.validate(url)
            assert without_source(got) == want, url
            # One suffix request for the trailer, index and KV, then the
            # descriptors (which the suffix usually holds as well).
            assert got.remote["requests"] <= 4, got.remote
            assert got.remote["bytes"] < 1 << 20, got.remote
    assert hrry.validate(served.http(large)).valid
    assert not hrry.validate(served.http(large_broken)).valid


def test_to_dict_is_the_cli_json_of_a_url(large, large_broken, served, hrry_bin):
    from test_report_dict import cli_file_object

    for path in (corpus_path(ENTRIES[0]), large, large_broken):
        url = served.http(path)
        d = hrry.validate(url).to_dict()
        cli = cli_file_object(url)
        # The same fields, the same values: what reading cost included.
        assert {k: d[k] for k in cli} == cli


def test_missing_and_refused_urls_name_the_url(served):
    url = served.base + "corpus/no-such-file.hrry"
    with pytest.raises(FileNotFoundError, match="no-such-file.hrry"):
        hrry.validate(url)
    with pytest.raises(FileNotFoundError, match="no-such-file.hrry"):
        hrry.validate(f"s3://{served.bucket}/corpus/no-such-file.hrry")
    # Credentials in a URL are sent, never shown.
    secret = url.replace("http://", "http://alice:s3cr3t@", 1)
    with pytest.raises(FileNotFoundError) as raised:
        hrry.validate(secret)
    assert "s3cr3t" not in str(raised.value) and "no-such-file.hrry" in str(raised.value)
    # Nothing listens on port 9 (discard) on loopback.
    with pytest.raises(OSError, match="127.0.0.1:9"):
        hrry.validate("http://127.0.0.1:9/x.hrry")
    with pytest.raises(OSError, match="s3://"):
        hrry.validate("s3://bucket-only")


def test_credentials_are_not_in_the_report(served):
    path = corpus_path(next(e for e in ENTRIES if e["valid"]))
    url = served.http(path).replace("http://", "http://alice:s3cr3t@", 1)
    report = hrry.validate(url)
    assert report.valid and report.file == served.http(path)
    assert "s3cr3t" not in repr(report.to_dict())


def test_a_path_like_is_never_a_url(tmp_path):
    # os.PathLike is a path even when its text looks like a URL.
    import pathlib

    with pytest.raises(FileNotFoundError):
        hrry.validate(pathlib.Path("http://example.invalid/x.hrry"))


def http_filesystem(base):
    """A minimal fsspec filesystem of HTTP range requests (urllib), whose files
    are fsspec's own AbstractBufferedFile, the class s3fs, gcsfs and hf:// files
    derive from; it counts the bytes it fetches."""
    import urllib.request

    from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

    def get(url, first, last):
        request = urllib.request.Request(url, headers={"Range": f"bytes={first}-{last}"})
        with urllib.request.urlopen(request) as answer:
            assert answer.status == 206
            return answer.read()

    class RangeFile(AbstractBufferedFile):
        def _fetch_range(self, start, end):
            if start >= end:
                return b""
            data = get(self.fs.base + self.path, start, end - 1)
            self.fs.fetched += len(data)
            self.fs.requests += 1
            return data

    class RangeFS(AbstractFileSystem):
        protocol = "rangehttp"

        def __init__(self, base, **kwargs):
            super().__init__(**kwargs)
            self.base = base
            self.fetched = 0
            self.requests = 0

        def info(self, path, **kwargs):
            request = urllib.request.Request(self.base + path, method="HEAD")
            with urllib.request.urlopen(request) as answer:
                size = int(answer.headers["Content-Length"])
            return {"name": path, "size": size, "type": "file"}

        def _open(self, path, mode="rb", block_size=None, **kwargs):
            return RangeFile(self, path, mode, block_size=block_size or 1 << 16, **kwargs)

    return RangeFS(base, skip_instance_cache=True)


def test_an_fsspec_file(large, served):
    fs = http_filesystem(served.base)
    for entry in ENTRIES[::5] + [{"path": None}]:
        path = large if entry["path"] is None else corpus_path(entry)
        with fs.open(served.relative(path), "rb") as f:
            got = hrry.validate(f)
        assert without_source(got) == without_source(hrry.validate(path)), path
    # The large file: the rules' reads, through fsspec's read-ahead cache.
    fs.fetched = 0
    with fs.open(served.relative(large), "rb") as f:
        assert hrry.validate(f).valid
    assert fs.fetched < 1 << 20, fs.fetched


HOLO = [e for e in ENTRIES if e["format"] == "holo"]


@pytest.mark.parametrize("entry", HOLO, ids=entry_ids(HOLO))
def test_holo_archives_over_http(entry, served):
    from test_fileobj import holo_outcome

    path = corpus_path(entry)
    assert holo_outcome(served.http(path)) == holo_outcome(path)
    with pytest.raises(FileNotFoundError, match="nothing.holo"):
        hrry.holo.open(served.base + "corpus/nothing.holo")


class _Hostile:
    """A loopback HTTP server of this test's own (a hostile peer, not a mock of
    hrry): each request answered as ``answer(path, range)`` says, from a thread."""

    def __init__(self, answer):
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.origin = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.requests = 0
        self.answer = answer
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            try:
                head = conn.recv(65536).decode("latin-1")
                path = head.split()[1]
                rng = [l for l in head.split("\r\n") if l.lower().startswith("range:")]
                self.answer(conn, path, rng[0].split("=")[1] if rng else "")
            except OSError:
                pass

    def close(self):
        self.sock.close()


def _partial(conn, data, extra=""):
    conn.sendall(
        (
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-%d/%d\r\n"
            "Content-Length: %d\r\nConnection: close\r\n%s\r\n"
            % (len(data) - 1, len(data), len(data), extra)
        ).encode()
    )


def test_network_options_bound_hostile_servers():
    import time

    data = open(corpus_path({"path": "valid/basic.hrry"}), "rb").read()

    def trickle(conn, path, rng):
        _partial(conn, data)
        for b in data:
            conn.sendall(bytes([b]))
            time.sleep(1)

    server = _Hostile(trickle)
    try:
        started = time.monotonic()
        with pytest.raises(OSError, match="stalled"):
            hrry.validate(server.origin + "/m.hrry", stall_timeout=1, retries=0)
        # One try of about a second, far from the 2-minute request timeout.
        assert time.monotonic() - started < 30
        assert server.requests == 1
    finally:
        server.close()

    def gzipped(conn, path, rng):
        _partial(conn, data, "Content-Encoding: gzip\r\n")
        conn.sendall(data)

    server = _Hostile(gzipped)
    try:
        with pytest.raises(OSError, match="Content-Encoding `gzip`"):
            hrry.open(server.origin + "/m.hrry")
    finally:
        server.close()

    elsewhere = _Hostile(lambda conn, path, rng: (_partial(conn, data), conn.sendall(data)))

    def away(conn, path, rng):
        conn.sendall(
            (
                "HTTP/1.1 302 Found\r\nLocation: %s/m.hrry\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n" % elsewhere.origin
            ).encode()
        )

    server = _Hostile(away)
    try:
        with pytest.raises(OSError) as raised:
            hrry.load_file(server.origin + "/m.hrry", timeout=10, retries=1)
        assert server.origin in str(raised.value) and elsewhere.origin in str(raised.value)
        assert elsewhere.requests == 0
    finally:
        server.close()
        elsewhere.close()

    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError):
            hrry.validate("http://127.0.0.1:1/m.hrry", timeout=bad)
