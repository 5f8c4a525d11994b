"""hrry.Client against a real `hrry serve` (the release binary the suite uses):
fetched arrays equal File.get_tensor and `hrry fetch -o X.npy`, puts round-trip,
and failures raise the documented exceptions."""

import os
import socket
import subprocess
import threading

import numpy as np
import pytest

import hrry
from conftest import CORPUS, HRRY_BIN, run_hrry

# interchange.md's error_code of UNKNOWN_TENSOR.
UNKNOWN_TENSOR = 0x02

FILES = [
    "valid/basic.hrry",
    "valid/all_element_types.hrry",
    "valid/scalar_empty_column_major.hrry",
    "valid/composite_partition.hrry",
    "valid/composite_overlay.hrry",
    "valid/composite_nested_group.hrry",
    "valid/layout-csr.hrry",
    "valid/layout-coo.hrry",
    "valid/layout-csf.hrry",
    "valid/layout-tiled.hrry",
    "valid/layout-strided-reversed.hrry",
    "valid/layout-partition-2x2.hrry",
    "valid/layout-overlay.hrry",
    "valid/quant-nf4.hrry",
    "valid/quant-per-block-int4-f16.hrry",
    "valid/quant-block-paged-per-block.hrry",
]


class Server:
    """`hrry serve` on a free port of 127.0.0.1, killed by `stop`."""

    def __init__(self, *paths, args=()):
        self.proc = subprocess.Popen(
            [HRRY_BIN, "serve", "--listen", "127.0.0.1:0", *args, *paths],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # A server that cannot start exits, which ends the line; the timer bounds a
        # server that neither starts nor exits.
        timer = threading.Timer(30, self.proc.kill)
        timer.start()
        try:
            line = self.proc.stdout.readline()
        finally:
            timer.cancel()
        if not line.startswith("listening on "):
            self.stop()
            pytest.fail(f"hrry serve did not start: {line!r} {self.proc.stderr.read()}")
        self.address = line.split()[-1]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def serve(request):
    """serve(*paths): starts a server, stopped when the test ends."""

    def start(*paths, args=()):
        server = Server(*paths, args=args)
        request.addfinalizer(server.stop)
        return server.address

    return start


def path(name):
    return os.path.join(CORPUS, name)


def assert_same(got, want):
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", FILES)
def test_fetch_equals_get_tensor(serve, name):
    address = serve(path(name))
    with hrry.open(path(name)) as f, hrry.Client(address, timeout=30) as c:
        assert f.keys()
        for key in f.keys():
            try:
                want = f.get_tensor(key)
            except hrry.HrryError:
                # No array for it locally: none over the network either.
                with pytest.raises(hrry.HrryError):
                    c.fetch(key)
                continue
            assert_same(c.fetch(key), want)
            # Asked in its stored layout (no transcoding by the server, converted
            # here, composites with their members), the array is the same.
            assert_same(c.fetch(key, layout=f.info(key)["layout"]), want)
        assert not c.closed


def test_fetch_equals_cli_fetch(serve, tmp_path):
    name = path("valid/quant-per-block-int4-f16.hrry")
    address = serve(name)
    with hrry.open(name) as f, hrry.Client(address) as c:
        for i, key in enumerate(f.keys()):
            out = tmp_path / f"{i}.npy"
            r = run_hrry("fetch", address, key, "-o", str(out))
            assert r.returncode == 0, r.stderr
            assert_same(c.fetch(key), np.load(out))


def test_fetch_raw(serve):
    name = path("valid/basic.hrry")
    address = serve(name)
    with hrry.open(name) as f, hrry.Client(address) as c:
        for key in f.keys():
            (info, buffers), = c.fetch_raw(key)
            assert info == f.info(key)
            assert [len(b) for b in buffers] == info["buffers"]
            assert all(isinstance(b, bytes) for b in buffers)
            assert b"".join(buffers) == f.get_tensor(key).tobytes()
    # A composite comes with its members.
    name = path("valid/composite_partition.hrry")
    address = serve(name)
    with hrry.open(name) as f, hrry.Client(address) as c:
        heads = [k for k in f.keys() if f.info(k)["layout"] == "composite"]
        assert heads
        got = c.fetch_raw(heads[0])
        assert got[0][0] == f.info(heads[0])
        assert len(got) > 1


def test_put_then_fetch(serve, tmp_path):
    name = path("valid/basic.hrry")
    other = tmp_path / "other.hrry"
    hrry.save_file({"w": np.arange(12, dtype=np.float32).reshape(3, 4)}, str(other))
    address = serve(name)
    with hrry.Client(address) as c:
        c.put(str(other), "w")  # a path
        assert_same(c.fetch("w"), hrry.open(str(other)).get_tensor("w"))
        with hrry.open(str(other)) as f:
            c.put(f, "w", as_key="pushed.w")  # an open File, another key
            assert_same(c.fetch("pushed.w"), f.get_tensor("w"))
        # The push is visible to other clients, and to the CLI.
        with hrry.Client(address) as c2:
            assert_same(c2.fetch("pushed.w"), c.fetch("w"))
        out = tmp_path / "cli.npy"
        r = run_hrry("fetch", address, "pushed.w", "-o", str(out))
        assert r.returncode == 0, r.stderr
        assert_same(np.load(out), c.fetch("w"))
        with pytest.raises(KeyError):
            c.put(str(other), "no such tensor")
        with pytest.raises(FileNotFoundError):
            c.put(str(tmp_path / "missing.hrry"), "w")
        with pytest.raises(hrry.InvalidFileError):
            c.put(path("invalid/HF-CMP-001.hrry"), "w")
        assert not c.closed


def test_put_refused_by_server(serve, tmp_path):
    big = tmp_path / "big.hrry"
    hrry.save_file({"w": np.zeros(4096, dtype=np.float32)}, str(big))
    address = serve(path("valid/basic.hrry"), args=("--store-limit", "1024"))
    with hrry.Client(address) as c:
        with pytest.raises(hrry.ServerError) as e:
            c.put(str(big), "w")
        assert isinstance(e.value.code, int)
        # The server's ERROR leaves the connection usable.
        assert not c.closed
        assert c.ping(b"still here") >= 0


def test_missing_key_raises(serve):
    address = serve(path("valid/basic.hrry"))
    with hrry.Client(address) as c:
        with pytest.raises(hrry.ServerError) as e:
            c.fetch("no such tensor")
        assert e.value.name == "UNKNOWN_TENSOR"
        assert e.value.code == UNKNOWN_TENSOR
        assert e.value.server_message
        assert "UNKNOWN_TENSOR" in str(e.value)
        assert isinstance(e.value, hrry.HrryError)
        with pytest.raises(hrry.ServerError):
            c.fetch_raw("no such tensor")
        # The connection lives on.
        key = hrry.open(path("valid/basic.hrry")).keys()[0]
        assert c.fetch(key).size >= 0
        assert isinstance(c.ping(), float)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_raises_oserror():
    port = free_port()
    with pytest.raises(ConnectionRefusedError):
        hrry.Client(f"127.0.0.1:{port}")
    with pytest.raises(OSError):
        hrry.Client(("127.0.0.1", port))


def test_timeout_raises_timeout_error():
    # A listener that accepts and never answers the HELLO.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(TimeoutError):
            hrry.Client(s.getsockname(), timeout=0.2)


def test_not_a_server_raises_protocol_error():
    # A peer that answers the HELLO with garbage, then hangs up.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()

        def answer():
            conn, _ = s.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b"\0" * 64)

        t = threading.Thread(target=answer)
        t.start()
        try:
            with pytest.raises((hrry.ProtocolError, OSError)):
                hrry.Client(s.getsockname(), timeout=10)
        finally:
            t.join()


def test_closed_client(serve):
    address = serve(path("valid/basic.hrry"))
    c = hrry.Client(address)
    assert address in repr(c) and c.address == address
    c.close()
    c.close()
    assert c.closed
    with pytest.raises(ValueError):
        c.fetch("x")
    with pytest.raises(ValueError):
        c.ping()


def test_bad_arguments(serve):
    address = serve(path("valid/basic.hrry"))
    with pytest.raises(TypeError):
        hrry.Client(7070)
    with pytest.raises(TypeError):
        hrry.Client(("127.0.0.1", "port"))
    with pytest.raises(ValueError):
        hrry.Client("")
    for t in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            hrry.Client(address, timeout=t)
    with pytest.raises(TypeError):
        hrry.Client(address, timeout="1")
    with hrry.Client(address) as c:
        with pytest.raises(TypeError):
            c.fetch(1)
        with pytest.raises(ValueError):
            c.fetch("x", layout="no-such-layout")
        with pytest.raises(ValueError):
            c.fetch("x", layout=256)
        with pytest.raises(TypeError):
            c.fetch("x", layout=1.5)
        with pytest.raises(TypeError):
            c.put(3, "w")
        with pytest.raises(ValueError):
            c.put(path("valid/basic.hrry"), "w", as_key="")
        with pytest.raises(TypeError):
            c.ping("text")
        # None of these touched the connection.
        assert not c.closed
        assert c.ping(b"ok") >= 0


def test_threads_share_a_client(serve):
    name = path("valid/all_element_types.hrry")
    address = serve(name)
    with hrry.open(name) as f, hrry.Client(address) as c:
        keys = [k for k in f.keys() if f.info(k)["dtype"] in ("float32", "int8", "uint16")]
        assert keys
        errors = []

        def work():
            try:
                for _ in range(20):
                    for k in keys:
                        assert_same(c.fetch(k), f.get_tensor(k))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors


def test_network_wait_releases_the_gil():
    # While a client waits on a silent peer, other Python threads run.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        done = threading.Event()
        ticks = []

        def wait():
            try:
                hrry.Client(s.getsockname(), timeout=0.5)
            except TimeoutError:
                pass
            finally:
                done.set()

        t = threading.Thread(target=wait)
        t.start()
        while not done.is_set():
            ticks.append(1)
            done.wait(0.01)
        t.join()
        assert len(ticks) > 10
