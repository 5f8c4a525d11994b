"""The README's Python example runs as written."""

import os
import re

from conftest import ROOT


def test_readme_example(tmp_path, monkeypatch):
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "no python example in README.md"
    os.symlink(os.path.join(ROOT, "corpus"), tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    import hrry

    assert hrry.load_file("copy.hrry")["w"].shape == (2, 3)
