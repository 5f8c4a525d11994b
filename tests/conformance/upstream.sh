#!/usr/bin/env bash
# Explores the upstream Hurray Python package (`hurray`, built from a copy of the
# pgillet/hurray repository) with `hrry conformance explore`, through the adapter
# `upstream_testee.py`, which speaks the testee protocol over `hurray.load`.
#
# Not part of `cargo test` nor of CI: it needs the network (pip, crates.io, and a
# clone of the repository unless one is given) and builds a Rust extension.
#
#   tests/conformance/upstream.sh [EXPLORE ARGS...]
#
# Environment:
#   HURRAY_SRC   a checkout of pgillet/hurray (default: cloned into
#                target/upstream-hurray/src)
#   HRRY         the hrry binary (default: target/release/hrry, then target/debug/hrry)
#   EXPLORE ARGS default to `--seed 1 --time 60`; the folder of found cases is
#                target/upstream-hurray/found unless --out is given.
#
# The venv (target/upstream-hurray/venv) is built once per source commit.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/target/upstream-hurray"
venv="$work/venv"
mkdir -p "$work"

src=${HURRAY_SRC:-}
if [ -z "$src" ]; then
    src="$work/src"
    if [ ! -d "$src/hurray-python" ]; then
        git clone --depth 1 https://github.com/pgillet/hurray "$src"
    fi
fi
[ -f "$src/hurray-python/pyproject.toml" ] || {
    echo "upstream.sh: $src is not a checkout of pgillet/hurray (no hurray-python/)" >&2
    exit 2
}

# What the venv was built from: the source's commit, or a hash of its files.
stamp=$( (test -e "$src/.git" && git -C "$src" rev-parse HEAD) ||
    find "$src/hurray-python" "$src/hurray-core" "$src/hurray-io" "$src/hurray-ffi" \
        -type f \( -name '*.rs' -o -name '*.toml' \) -print0 | sort -z |
        xargs -0 cat | sha256sum | cut -d' ' -f1)
# The build's output goes to standard error: standard output is explore's.
if [ "$(cat "$venv/.hurray-source" 2>/dev/null)" != "$stamp" ]; then
    {
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --upgrade pip
        "$venv/bin/pip" install --quiet 'maturin>=1.7,<2' 'numpy>=1.24'
        # pip builds the extension with maturin (cargo) in the checkout's target/;
        # without build isolation, maturin is found on PATH.
        PATH="$venv/bin:$PATH" "$venv/bin/pip" install --no-build-isolation "$src/hurray-python"
    } >&2
    echo "$stamp" >"$venv/.hurray-source"
fi
"$venv/bin/python" -c 'import hurray; print("hurray", hurray.__version__, "from", hurray.__file__)' >&2

hrry=${HRRY:-}
if [ -z "$hrry" ]; then
    for b in "$root/target/release/hrry" "$root/target/debug/hrry"; do
        if [ -x "$b" ]; then hrry=$b; break; fi
    done
fi
[ -n "$hrry" ] || { echo "upstream.sh: build hrry first (cargo build --release)" >&2; exit 2; }

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--seed 1 --time 60)
case " ${args[*]} " in
*" --out "*) ;;
*) rm -rf "$work/found"; args+=(--out "$work/found") ;;
esac
exec "$hrry" conformance explore "${args[@]}" -- \
    "$venv/bin/python" "$root/tests/conformance/upstream_testee.py"
