#!/usr/bin/env bash
# Builds the Python package `hrry` into a virtual environment cached under
# target/py-hrry (installing maturin, numpy, pytest and ml_dtypes there, torch for
# hrry.torch, safetensors and gguf for the comparisons and python/bench/, and
# dask.distributed for the cluster example), builds the release `hrry` binary the
# tests compare against, starts the loopback HTTP and S3 servers of
# tests/remote/servers.sh (URLs, fsspec files, the Dask example) and runs
# python/tests with pytest. Every optional dependency is required (HRRY_REQUIRE_OPTIONAL=1): a
# missing one fails the tests instead of skipping them.
# Extra arguments go to pytest (e.g. `python/run_tests.sh -k holo`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/py-hrry/venv
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import maturin, numpy, pytest, safetensors, gguf, ml_dtypes, dask.distributed" \
    2>/dev/null || "${pip[@]}" maturin numpy pytest safetensors gguf ml_dtypes "dask[distributed]"
# PyPI's torch wheel is a CUDA build whose CUDA libraries (NVIDIA's wheels) are
# gigabytes the CPU tests never call: torch alone, its small pure-Python
# dependencies, and stubs of the CUDA libraries (python/cuda_stubs.py).
torch_version=2.15.0
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$torch_version')" 2>/dev/null; then
    "${pip[@]}" filelock typing-extensions sympy mpmath networkx jinja2 MarkupSafe fsspec
    "${pip[@]}" --no-deps "torch==$torch_version"
    "$venv/bin/python" python/cuda_stubs.py
fi
cargo build --release --quiet --bin hrry
# A wheel into target/py-hrry/wheels (the release build shares the workspace's
# target/), installed into the venv; nothing is written into the source tree.
rm -rf "$root/target/py-hrry/wheels"
"$venv/bin/maturin" build --release --quiet -m python/Cargo.toml \
    -i "$venv/bin/python" -o "$root/target/py-hrry/wheels"
"${pip[@]}" --force-reinstall --no-deps "$root"/target/py-hrry/wheels/hrry-*.whl
source tests/remote/servers.sh
# From the root, so that `import hrry` finds the installed package, not python/hrry.
HRRY_BIN="$root/target/release/hrry" HRRY_ROOT="$root" HRRY_REQUIRE_OPTIONAL=1 \
    "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider "$@"
