#!/usr/bin/env bash
# The Python package as a user without Rust gets it: the wheel python/run_tests.sh
# built (target/py-hrry/wheels; built here with maturin if missing), checked by
# `auditwheel show` (its manylinux tag) and for its abi3 tag and licences, installed
# with its dependencies into a fresh venv by a pip that sees no cargo or rustc on
# PATH, then tests/package/smoke.py run from outside the source tree (open,
# validate, load_file; torch is absent there, so it is run again in
# target/py-hrry/venv, which has torch and the same wheel). Also builds the sdist.
# Prints the sizes, and the seconds from `pip install` of the wheel to a tensor loaded.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/package-python"
rm -rf "$out"
mkdir -p "$out/home"
pyvenv="$target/py-hrry/venv"
wheels="$target/py-hrry/wheels"
if ! ls "$wheels"/hrry-*.whl >/dev/null 2>&1; then
    [ -x "$pyvenv/bin/python" ] || python3 -m venv "$pyvenv"
    "$pyvenv/bin/pip" install --quiet --disable-pip-version-check maturin numpy
    "$pyvenv/bin/maturin" build --release --quiet -m python/Cargo.toml \
        -i "$pyvenv/bin/python" -o "$wheels"
fi
wheel=$(ls "$wheels"/hrry-*.whl)
name=$(basename "$wheel")
echo "wheel: $name, $(stat -c %s "$wheel") bytes"
case "$name" in
    *-cp39-abi3-manylinux*_x86_64*.whl | *-cp39-abi3-manylinux*_aarch64*.whl) ;;
    *) echo "not an abi3 manylinux wheel: $name" >&2; exit 1 ;;
esac
listing=$(python3 -m zipfile -l "$wheel")
for licence in LICENSE-MIT LICENSE-APACHE; do
    grep -q "dist-info/.*$licence" <<<"$listing" \
        || { echo "$licence is not in the wheel" >&2; exit 1; }
done

# auditwheel (and the sdist's maturin) in a tools venv.
tools="$target/package-tools"
[ -x "$tools/bin/python" ] || python3 -m venv "$tools"
"$tools/bin/python" -c "import auditwheel" 2>/dev/null \
    || "$tools/bin/pip" install --quiet --disable-pip-version-check "auditwheel==6.8.2"
"$tools/bin/auditwheel" show "$wheel" | tee "$out/auditwheel.txt"
# "... is consistent with the following platform tag: "manylinux_2_34_x86_64"."
policy=$(tr '\n' ' ' <"$out/auditwheel.txt" \
    | grep -o 'following platform tag: "[a-z0-9_]*"' | head -n 1 | cut -d '"' -f 2)
[ -n "$policy" ] && [[ "$name" == *"$policy"* ]] \
    || { echo "auditwheel does not accept the wheel's tag ($policy)" >&2; exit 1; }

# A fresh venv, a PATH with python but no Rust toolchain.
bare_path="$out/bin"
mkdir -p "$bare_path"
for tool in python3 env; do ln -s "$(command -v "$tool")" "$bare_path/$tool"; done
python3 -m venv "$out/venv"
if PATH="$out/venv/bin:$bare_path" command -v cargo rustc; then
    echo "cargo or rustc is on the bare PATH" >&2
    exit 1
fi
run_bare() {
    env -i HOME="$out/home" PATH="$out/venv/bin:$bare_path" \
        PIP_CACHE_DIR="$target/pip-cache" "$@"
}
cd "$out/home"
begin=$(date +%s.%N)
run_bare pip install --quiet --disable-pip-version-check --only-binary=:all: "$wheel"
run_bare python -c "import hrry; t = hrry.load_file('$root/corpus/valid/basic.hrry'); assert t"
end=$(date +%s.%N)
run_bare python "$root/tests/package/smoke.py" "$root/corpus"
if [ -x "$pyvenv/bin/python" ] && "$pyvenv/bin/python" -c "import torch" 2>/dev/null; then
    "$pyvenv/bin/python" "$root/tests/package/smoke.py" "$root/corpus"
fi
cd "$root"
echo "pip install of the wheel (with NumPy) to a loaded tensor: $(python3 -c "print(f'{$end - $begin:.1f}')") s"

"$tools/bin/python" -c "import maturin" 2>/dev/null \
    || "$tools/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
"$tools/bin/maturin" sdist -m python/Cargo.toml -o "$out/sdist" >"$out/sdist.log" 2>&1 \
    || { cat "$out/sdist.log" >&2; exit 1; }
sdist=$(ls "$out"/sdist/hrry-*.tar.gz)
listing=$(tar tzf "$sdist")
for needed in pyproject.toml LICENSE-MIT LICENSE-APACHE hrry/__init__.py; do
    grep -q "$needed" <<<"$listing" || { echo "$needed not in the sdist" >&2; exit 1; }
done
echo "sdist: $(basename "$sdist"), $(stat -c %s "$sdist") bytes"
