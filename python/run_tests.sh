#!/usr/bin/env bash
# Builds the Python package `hrry` into a virtual environment cached under
# target/py-hrry (installing maturin, numpy and pytest there, and safetensors and
# gguf for python/bench/bench.py), builds the release
# `hrry` binary the tests compare against, and runs python/tests with pytest.
# Extra arguments go to pytest (e.g. `python/run_tests.sh -k holo`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-hrry/venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import maturin, numpy, pytest, safetensors, gguf" 2>/dev/null \
    || "$venv/bin/pip" install --quiet --disable-pip-version-check \
        maturin numpy pytest safetensors gguf
cargo build --release --quiet --bin hrry
# A wheel into target/py-hrry/wheels (the release build shares the workspace's
# target/), installed into the venv; nothing is written into the source tree.
rm -rf "$root/target/py-hrry/wheels"
"$venv/bin/maturin" build --release --quiet -m python/Cargo.toml \
    -i "$venv/bin/python" -o "$root/target/py-hrry/wheels"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
    "$root"/target/py-hrry/wheels/hrry-*.whl
# From the root, so that `import hrry` finds the installed package, not python/hrry.
HRRY_BIN="$root/target/release/hrry" HRRY_ROOT="$root" \
    "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider "$@"
