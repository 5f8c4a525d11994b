"""Random mutations of valid files never crash the interpreter: each batch runs in a
child process, so a crash (a signal) is seen as such instead of killing pytest."""

import os
import subprocess
import sys

import pytest

from conftest import corpus_path, manifest_entries

VALID = [corpus_path(e) for e in manifest_entries() if e["valid"]]
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutate_child.py")
SEED = int(os.environ.get("HRRY_MUTATION_SEED", "1"))
ROUNDS = int(os.environ.get("HRRY_MUTATION_ROUNDS", "40"))


@pytest.mark.parametrize("part", range(4))
def test_mutations_never_crash(part):
    files = VALID[part::4]
    done = subprocess.run(
        [sys.executable, CHILD, str(SEED * 10 + part), str(ROUNDS), *files],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode >= 0, f"interpreter killed by signal {-done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-4000:]
    assert "mutated inputs" in done.stdout
