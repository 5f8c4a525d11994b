#!/usr/bin/env bash
# hrry::remote against real servers on loopback (tests/remote/servers.sh: nginx
# serving the repository, s3s-fs serving it as an S3 bucket; REMOTE_S3=0 skips
# S3): runs tests/remote.rs (the debug build `cargo test` made; the sparse 25 GiB
# model is written once under target/remote-test/). The test prints the requests
# and bytes each remote validation cost (--nocapture).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/remote/servers.sh
cargo test --test remote -- --nocapture --test-threads=1 2>&1 | grep -E '^(test |validate |inspect |export |diff |[0-9]+ corpus)|result|panicked|assert'
exit "${PIPESTATUS[0]}"
