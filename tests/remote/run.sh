#!/usr/bin/env bash
# hrry::remote against a real HTTP server: installs nginx (Debian package) if it is
# missing, serves the repository on a loopback port, and runs tests/remote.rs with
# HRRY_TEST_HTTP_BASE set to its URL (the debug build `cargo test` made; the
# sparse 25 GiB model is written once under target/remote-test/). The test prints
# the requests and bytes each remote validation cost (--nocapture).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v nginx >/dev/null; then
    if ! apt-get install -y nginx-light >/dev/null 2>&1; then
        apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null
    fi
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/hrry-nginx.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|" -e "s|@ROOT@|$PWD|" tests/remote/nginx.conf.in >"$dir/nginx.conf"
nginx -c "$dir/nginx.conf" -p "$dir" &
nginx_pid=$!
trap 'kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do
    curl -fs -o /dev/null -r 0-0 "http://127.0.0.1:$port/Cargo.toml" && break
    sleep 0.1
done
export HRRY_TEST_HTTP_BASE="http://127.0.0.1:$port/"
# What the server serves: where the tests write the files they fetch.
export HRRY_TEST_HTTP_ROOT="$PWD"

# S3: s3s-fs (built once into target/tools; REMOTE_S3=0 skips it) serving the
# repository as bucket `repo`, with a key pair the tests sign with.
if [ "${REMOTE_S3:-1}" != 0 ]; then
    s3s=target/tools/bin/s3s-fs
    if [ ! -x "$s3s" ]; then
        cargo install --quiet --locked --root target/tools --target-dir target/tools-build \
            s3s-fs@0.14.1 --features binary
    fi
    mkdir -p "$dir/s3" && ln -s "$PWD" "$dir/s3/repo"
    s3port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$s3s" --host 127.0.0.1 --port "$s3port" --access-key hrry-test-key \
        --secret-key hrry-test-secret "$dir/s3" >"$dir/s3s.log" 2>&1 &
    s3s_pid=$!
    trap 'kill "$nginx_pid" "$s3s_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
    for _ in $(seq 50); do
        curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break
        sleep 0.1
    done
    export HRRY_TEST_S3_BUCKET=repo AWS_ACCESS_KEY_ID=hrry-test-key \
        AWS_SECRET_ACCESS_KEY=hrry-test-secret AWS_REGION=us-east-1 \
        AWS_ENDPOINT_URL="http://127.0.0.1:$s3port"
fi
cargo test --test remote -- --nocapture --test-threads=1 2>&1 | grep -E '^(test |validate |inspect |export |[0-9]+ corpus)|result|panicked|assert'
exit "${PIPESTATUS[0]}"
