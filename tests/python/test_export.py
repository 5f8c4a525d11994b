#!/usr/bin/env python3
"""`hrry export` writes arrays NumPy loads to the expected values.

Creates a virtual environment, installs numpy from PyPI into it, builds `hrry` and
the fixture generator (`tools/src/bin/export_fixtures.rs`), exports every fixture tensor
with `hrry export FILE TENSOR -o OUT.npy`, and compares `numpy.load` of each
output with the dtype, shape and values the generator recorded.

Run from anywhere: python3 tests/python/test_export.py
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def ensure_numpy(work):
    """Re-executes this script inside a venv holding numpy, unless already there."""
    if os.environ.get("HRRY_EXPORT_TEST_VENV"):
        return
    env_dir = os.path.join(work, "venv")
    venv.create(env_dir, with_pip=True)
    python = os.path.join(env_dir, "bin", "python")
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "numpy"])
    env = dict(os.environ, HRRY_EXPORT_TEST_VENV="1", HRRY_EXPORT_TEST_WORK=work)
    sys.exit(subprocess.run([python, os.path.abspath(__file__)], env=env).returncode)


def expected_array(np, case):
    dtype = np.dtype(case["dtype"])

    def scalar(v):
        if isinstance(v, str):
            return float(v)  # "nan", "inf", "-inf"
        if isinstance(v, list):
            return complex(v[0], v[1])
        return v

    values = [scalar(v) for v in case["values"]]
    return np.array(values, dtype=dtype).reshape(case["shape"])


def same(np, got, want):
    if got.dtype.kind in "fc":
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64).ravel()
        w = want.astype(g.dtype).ravel()
        for a, b in zip(g.tolist(), w.tolist()):
            parts = [(a.real, b.real), (a.imag, b.imag)] if isinstance(a, complex) else [(a, b)]
            for x, y in parts:
                if not (x == y or (math.isnan(x) and math.isnan(y))):
                    return False
        return True
    return got.tolist() == want.tolist()


def main():
    work = os.environ.get("HRRY_EXPORT_TEST_WORK") or tempfile.mkdtemp(prefix="hrry-export-")
    ensure_numpy(work)
    import numpy as np

    fixtures = os.path.join(work, "fixtures")
    run(["cargo", "build", "--quiet", "-p", "hrry", "--bin", "hrry", "-p", "hrry-tools", "--bin", "export_fixtures"], cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    run([os.path.join(target, "debug", "export_fixtures"), fixtures])
    hrry = os.path.join(target, "debug", "hrry")
    with open(os.path.join(fixtures, "expected.json")) as f:
        cases = json.load(f)["cases"]
    failures = []
    for case in cases:
        out = os.path.join(work, case["file"] + ".npy")
        run([hrry, "export", os.path.join(fixtures, case["file"]), case["tensor"], "-o", out])
        got = np.load(out)
        want = expected_array(np, case)
        if got.dtype.str != want.dtype.str and not (got.dtype == want.dtype):
            failures.append("%s: dtype %s, expected %s" % (case["file"], got.dtype.str, case["dtype"]))
        elif list(got.shape) != case["shape"]:
            failures.append("%s: shape %s, expected %s" % (case["file"], got.shape, case["shape"]))
        elif not same(np, got, want):
            failures.append("%s: values %s, expected %s" % (case["file"], got.tolist(), want.tolist()))
    if failures:
        print("\n".join(failures))
        print("FAILED: %d of %d exports" % (len(failures), len(cases)))
        return 1
    print("ok: %d exports load in numpy %s as expected" % (len(cases), np.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
