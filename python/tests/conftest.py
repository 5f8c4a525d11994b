"""Shared fixtures: the repository root, the release `hrry` binary the tests compare
against, and the conformance corpus manifest."""

import json
import os
import subprocess

import numpy as np
import pytest

ROOT = os.environ.get("HRRY_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
HRRY_BIN = os.environ.get("HRRY_BIN") or os.path.join(ROOT, "target", "release", "hrry")
CORPUS = os.path.join(ROOT, "corpus")


def manifest_entries():
    with open(os.path.join(CORPUS, "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["version"] == 1
    return manifest["files"]


def corpus_path(entry):
    return os.path.join(CORPUS, entry["path"])


def entry_ids(entries):
    """Test ids for manifest entries: their paths."""
    return [e["path"] for e in entries]


def without_source(report):
    """A report's dict without what names the source and what reading it cost."""
    d = report.to_dict()
    del d["file"], d["remote"]
    return d


@pytest.fixture(scope="session")
def hrry_bin():
    if not os.path.exists(HRRY_BIN):
        pytest.fail(f"{HRRY_BIN} missing: build it with cargo build --release --bin hrry")
    return HRRY_BIN


def run_hrry(*args):
    """Runs the `hrry` binary; returns the completed process (never raises)."""
    return subprocess.run([HRRY_BIN, *args], capture_output=True, text=True)


def optional(module):
    """Imports an optional dependency of some tests (torch, ml_dtypes, safetensors):
    skips the test without it, unless HRRY_REQUIRE_OPTIONAL=1 (as run_tests.sh
    sets), where a missing one fails."""
    import importlib

    if os.environ.get("HRRY_REQUIRE_OPTIONAL") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module)


def mapped_ranges(path):
    """The address ranges at which this process maps the file at `path`, from
    /proc/self/maps (Linux)."""
    target = os.path.realpath(path)
    ranges = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].strip() == target:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                ranges.append((start, end))
    return ranges


def same_floats(got, want):
    """Equal shapes and float32 values, NaN equal to NaN, -0.0 told from 0.0."""
    assert got.shape == want.shape
    g, w = got.astype(np.float32).ravel(), want.astype(np.float32).ravel()
    nan = np.isnan(g)
    assert np.array_equal(nan, np.isnan(w))
    assert g[~nan].view(np.uint32).tolist() == w[~nan].view(np.uint32).tolist()


def _missing(what):
    """Skips the test for want of `what`, or fails it with HRRY_REQUIRE_OPTIONAL=1."""
    message = f"no {what}: python/run_tests.sh starts the test servers (tests/remote/servers.sh)"
    if os.environ.get("HRRY_REQUIRE_OPTIONAL") == "1":
        pytest.fail(message)
    pytest.skip(message)


class Served:
    """URLs of files under the folder the loopback test servers of
    tests/remote/servers.sh serve (which python/run_tests.sh starts): nginx at
    HRRY_TEST_HTTP_BASE, s3s-fs as bucket HRRY_TEST_S3_BUCKET. Without them the
    test is skipped, unless HRRY_REQUIRE_OPTIONAL=1, where it fails."""

    def __init__(self):
        self.base = os.environ.get("HRRY_TEST_HTTP_BASE") or _missing("HTTP server")
        self.root = os.environ.get("HRRY_TEST_HTTP_ROOT") or ROOT

    @property
    def bucket(self):
        return os.environ.get("HRRY_TEST_S3_BUCKET") or _missing("S3 server")

    def relative(self, path):
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(self.root))
        assert not rel.startswith(".."), f"{path} is not under {self.root}"
        return rel.replace(os.sep, "/")

    def http(self, path):
        return self.base + self.relative(path)

    def s3(self, path):
        return f"s3://{self.bucket}/{self.relative(path)}"

    def scratch(self, name):
        """A folder for files the servers are to serve (under target/)."""
        d = os.path.join(self.root, "target", "py-hrry", "served", name)
        os.makedirs(d, exist_ok=True)
        return d


@pytest.fixture(scope="session")
def served():
    return Served()
