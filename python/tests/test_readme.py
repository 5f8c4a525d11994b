"""The READMEs' Python examples run as written: the repository README's (from a
scratch directory, as before), and each block of python/README.md from the
repository root, with its own imports, writing nothing into the repository."""

import os
import re

import pytest

from conftest import ROOT, Served, optional
from test_client import Server


def python_blocks(path):
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"no python example in {path}"
    return blocks


def test_readme_example(tmp_path, monkeypatch):
    blocks = python_blocks(os.path.join(ROOT, "README.md"))
    os.symlink(os.path.join(ROOT, "corpus"), tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    # A newcomer runs the examples in a clone: they leave no file behind.
    assert sorted(os.listdir(tmp_path)) == ["corpus"]


PACKAGE_BLOCKS = python_blocks(os.path.join(ROOT, "python", "README.md"))
# The address the client example names, served by the test instead.
EXAMPLE_ADDRESS = "127.0.0.1:7070"
# The web server the remote example names: the test's nginx, serving the repository.
EXAMPLE_BASE = "https://example.com/"


def tree(root):
    """Every path under the repository's top level and python/ (not target/)."""
    names = set()
    for top in (root, os.path.join(root, "python")):
        names |= {os.path.join(top, n) for n in os.listdir(top)}
    return names


@pytest.mark.parametrize("index", range(len(PACKAGE_BLOCKS)))
def test_package_readme_block_runs_as_written(index, monkeypatch, hrry_bin):
    code = PACKAGE_BLOCKS[index]
    if "import torch" in code:
        optional("torch")
    if "widen=False" in code:
        optional("ml_dtypes")
    server = None
    if EXAMPLE_ADDRESS in code:
        server = Server(os.path.join(ROOT, "corpus", "valid", "basic.hrry"))
        code = code.replace(EXAMPLE_ADDRESS, server.address)
    if EXAMPLE_BASE in code:
        code = code.replace(EXAMPLE_BASE, Served().base)
    monkeypatch.chdir(ROOT)
    before = tree(ROOT)
    try:
        # A fresh namespace: each block brings its own imports.
        exec(compile(code, f"python/README.md block {index + 1}", "exec"), {})
    finally:
        if server is not None:
            server.stop()
    assert tree(ROOT) == before, "the example wrote into the repository"
