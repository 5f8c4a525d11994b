#!/usr/bin/env bash
# Checks `hrry convert` against the gguf and safetensors Python packages.
# Installs them into a venv under target/py, builds the release binary, runs
# tests/python/convert_check.py; exits non-zero on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/py/venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import gguf, safetensors, numpy" 2>/dev/null \
    || "$venv/bin/pip" install --quiet --disable-pip-version-check gguf safetensors numpy
cargo build --release --quiet --bin hrry
"$venv/bin/python" tests/python/convert_check.py target/release/hrry
