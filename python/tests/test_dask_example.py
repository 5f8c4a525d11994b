"""python/examples/dask_validate.py, run as its docstring says, on a LocalCluster of
worker processes: every corpus file over HTTP (nginx), larger files over S3
(s3s-fs) and a missing URL, each row the report a local validation gives."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hrry
from conftest import ROOT, corpus_path, manifest_entries, optional

EXAMPLE = os.path.join(ROOT, "python", "examples", "dask_validate.py")


def test_the_dask_example_gives_the_local_verdicts(served, tmp_path):
    optional("dask.distributed")
    entries = manifest_entries()
    paths = [corpus_path(e) for e in entries]
    # s3s-fs 0.14 refuses a suffix longer than the object: S3 gets files longer
    # than the first request, a valid one and one with a byte of its index changed.
    big = os.path.join(served.scratch("dask"), "big.hrry")
    hrry.save_file({"w": np.ones((1024, 1024), dtype=np.float32)}, big)
    broken = os.path.join(served.scratch("dask"), "big-broken.hrry")
    with open(big, "rb") as f:
        data = bytearray(f.read())
    data[-64] ^= 0x21  # in the index: its CRC and an entry break
    with open(broken, "wb") as f:
        f.write(data)
    assert not hrry.validate(broken).valid
    urls = [served.http(p) for p in paths] + [served.s3(big), served.s3(broken)]
    missing = served.base + "corpus/no-such-file.hrry"
    urls.append(missing)
    url_file = tmp_path / "urls.txt"
    url_file.write_text("\n".join(urls) + "\n")
    out = tmp_path / "reports.jsonl"
    done = subprocess.run(
        [sys.executable, EXAMPLE, "--from", str(url_file), "--jsonl", str(out), "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    # Exit 2: the missing URL could not be read.
    assert done.returncode == 2, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["file"] for r in rows] == urls
    local = paths + [big, broken]
    for row, path in zip(rows, local):
        want = hrry.validate(path)
        assert row["error"] is None, row
        assert row["valid"] == want.valid and row["format"] == want.format, row["file"]
        assert row["rules"] == want.rule_ids(), row["file"]
        assert row["violations"] == len(want.violations) + want.suppressed
        assert row["notes"] == want.notes and row["mode"] == "strict"
        assert row["remote"]["requests"] >= 1
    assert not rows[-2]["valid"] and rows[-3]["valid"]
    assert rows[-1]["valid"] is False and "no-such-file.hrry" in rows[-1]["error"]
    assert "404" in rows[-1]["error"] or "not found" in rows[-1]["error"].lower()
