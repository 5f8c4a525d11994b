"""The Python package as a conformance testee (conformance_testee.py, speaking the
protocol of docs/conformance-protocol.md): `hrry conformance` runs it against the
corpus built into the binary, from a folder outside the repository, and no case
fails. The cases it does not run are skipped for the reasons the adapter gives."""

import collections
import json
import os
import subprocess
import sys
import time

ADAPTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance_testee.py")

# Why a case may be skipped: what the adapter does not do (conversations; hashes of
# types NumPy cannot hold exactly; specs NumPy or Python values cannot express).
SKIP_REASONS = (
    "the testee does not read messages",
    "hashes not given",
    "skipped: no NumPy type for",
    "skipped: metadata:",
)


def test_the_python_adapter_fails_no_case(hrry_bin, tmp_path):
    start = time.monotonic()
    out = subprocess.run(
        [hrry_bin, "conformance", "--json", "--", sys.executable, ADAPTER],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - start
    doc = json.loads(out.stdout)
    statuses = collections.Counter(c["status"] for c in doc["cases"])
    tiers = {t: doc["summary"]["tiers"][t]["pass"] for t in ("verdict", "rule", "read", "write")}
    print(f"python adapter: {dict(statuses)} passes by tier {tiers} in {elapsed:.1f} s")
    failing = [c for c in doc["cases"] if c["status"] not in ("pass", "skip")]
    assert not failing, failing[:10]
    assert out.returncode == 0, out.stderr
    assert all(n > 0 for n in tiers.values()), tiers
    for c in doc["cases"]:
        if c["status"] == "skip":
            assert any(r in c["detail"] for r in SKIP_REASONS), c
    assert doc["testee"]["name"] == "hrry-python"
