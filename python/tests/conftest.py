"""Shared fixtures: the repository root, the release `hrry` binary the tests compare
against, and the conformance corpus manifest."""

import json
import os
import subprocess

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


@pytest.fixture(scope="session")
def hrry_bin():
    if not os.path.exists(HRRY_BIN):
        pytest.fail(f"{HRRY_BIN} missing: build it with cargo build --release --bin hrry")
    return HRRY_BIN


def run_hrry(*args):
    """Runs the `hrry` binary; returns the completed process (never raises)."""
    return subprocess.run([HRRY_BIN, *args], capture_output=True, text=True)
