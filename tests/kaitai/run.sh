#!/usr/bin/env bash
# Cross-language check of schema/*.ksy against the Rust reader.
#
#   tests/kaitai/run.sh [PATH...]
#
# Compiles the Kaitai Struct descriptions to Python with kaitai-struct-compiler
# (npm), parses every file under each PATH with the generated parsers and compares
# every field with `hrry inspect --json`; then proves that deliberate single-field
# edits of the schema are caught. Exits non-zero on any mismatch.
#
# Default PATHs: corpus/valid/, corpus/stream/valid/, corpus/messages/valid/, the
# sample files written by
# `cargo run --release -p hrry-tools --bin kaitai_samples`, and the upstream golden file
# (tests/data/upstream-vectors/files/).
#
# Installs what it needs into local folders: tests/kaitai/node_modules (npm ci,
# versions pinned by package-lock.json) and target/kaitai/venv (kaitaistruct from
# PyPI, pinned by requirements.txt). Needs node >= 18, npm, python3 >= 3.8, cargo.
#
# Environment: HRRY=path/to/hrry uses that binary instead of building one;
# KAITAI_PROFILE=dev builds hrry and the sample writer in the dev profile (target/debug,
# already built by `cargo test`) instead of release.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/kaitai"
# PATH arguments are relative to the caller's folder; everything else to the root.
args=()
for p in "$@"; do args+=("$(realpath -m -- "$p")"); done
cd "$root"

for tool in node npm python3 cargo; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 2; }
done
mkdir -p "$work"

# npm: the compiler and a YAML reader, pinned by package-lock.json.
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.hrry-lock" 2>/dev/null; then
    echo "kaitai: npm ci (tests/kaitai)"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$here/package-lock.json" "$here/node_modules/.hrry-lock"
fi

# PyPI: the Kaitai Struct Python runtime, in a venv under target/.
venv="$work/venv"
if ! cmp -s "$here/requirements.txt" "$venv/.hrry-requirements" 2>/dev/null; then
    echo "kaitai: python venv (target/kaitai/venv)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$venv/.hrry-requirements"
fi
python="$venv/bin/python"

# The Rust side: hrry itself and the sample writer.
profile="${KAITAI_PROFILE:-release}"
case "$profile" in
    release) bin="$root/target/release" ;;
    dev) bin="$root/target/debug" ;;
    *) echo "run.sh: KAITAI_PROFILE must be release or dev" >&2; exit 2 ;;
esac
if [[ -z "${HRRY:-}" ]]; then
    cargo build --profile "$profile" --quiet --bin hrry
    HRRY="$bin/hrry"
fi
cargo build --profile "$profile" --quiet -p hrry-tools --bin kaitai_samples
samples="$work/samples"
rm -rf "$samples"
"$bin/kaitai_samples" "$samples"

# Generated parsers (never committed).
gen="$work/gen"
rm -rf "$gen"
node "$here/compile.js" python "$gen" schema/hrryfile.ksy schema/holo.ksy \
    schema/hrry_stream.ksy schema/hrry_messages.ksy >/dev/null

if [[ ${#args[@]} -gt 0 ]]; then
    paths=("${args[@]}")
else
    paths=()
    if [[ -d corpus/valid ]]; then
        paths+=(corpus/valid corpus/stream/valid corpus/messages/valid)
    else
        echo "kaitai: corpus/valid/ does not exist yet; checking the samples only" >&2
    fi
    paths+=("$samples")
    # The upstream golden file.
    paths+=(tests/data/upstream-vectors/files)
fi

status=0
"$python" "$here/check.py" compare --gen "$gen" --hrry "$HRRY" "${paths[@]}" || status=1
"$python" "$here/check.py" self-test --gen-root "$work" --hrry "$HRRY" --schema schema \
    "${paths[@]}" || status=1
exit $status
