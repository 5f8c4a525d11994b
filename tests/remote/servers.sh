# Sourced (bash) by tests/remote/run.sh and python/run_tests.sh: starts the
# loopback servers remote reading is tested against, stopped when the sourcing
# shell exits, and exports where they are.
# - nginx (the Debian package nginx-light, installed if missing) serving the
#   repository: HRRY_TEST_HTTP_BASE is its URL, HRRY_TEST_HTTP_ROOT the folder
#   it serves (tests write the files they fetch under it), and
#   HRRY_TEST_HTTP_OTHER_BASE the same at another port (another origin); under
#   /faults/ it redirects, sends a gzip-encoded body and trickles;
# - s3s-fs (built once into target/tools; REMOTE_S3=0 skips it) serving the
#   repository as bucket `repo`: HRRY_TEST_S3_BUCKET, and the AWS_* variables
#   (a test key pair, AWS_ENDPOINT_URL) that clients sign with.
# Run from the repository root.
if ! command -v nginx >/dev/null; then
    if ! apt-get install -y nginx-light >/dev/null 2>&1; then
        apt-get update >/dev/null && apt-get install -y nginx-light >/dev/null
    fi
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
remote_dir=$(mktemp -d "${TMPDIR:-/tmp}/hrry-servers.XXXXXX")
remote_pids=()
trap 'kill "${remote_pids[@]}" 2>/dev/null; wait "${remote_pids[@]}" 2>/dev/null || true; rm -rf "$remote_dir"' EXIT
port=$(free_port)
other_port=$(free_port)
sed -e "s|@DIR@|$remote_dir|g" -e "s|@PORT@|$port|g" -e "s|@OTHER_PORT@|$other_port|g" \
    -e "s|@ROOT@|$PWD|g" \
    tests/remote/nginx.conf.in >"$remote_dir/nginx.conf"
nginx -c "$remote_dir/nginx.conf" -p "$remote_dir" &
remote_pids+=($!)
for _ in $(seq 50); do
    curl -fs -o /dev/null -r 0-0 "http://127.0.0.1:$port/Cargo.toml" && break
    sleep 0.1
done
export HRRY_TEST_HTTP_BASE="http://127.0.0.1:$port/"
# The same files at another origin (another port), for redirects.
export HRRY_TEST_HTTP_OTHER_BASE="http://127.0.0.1:$other_port/"
# What the server serves: where the tests write the files they fetch.
export HRRY_TEST_HTTP_ROOT="$PWD"

if [ "${REMOTE_S3:-1}" != 0 ]; then
    s3s=target/tools/bin/s3s-fs
    if [ ! -x "$s3s" ]; then
        cargo install --quiet --locked --root target/tools --target-dir target/tools-build \
            s3s-fs@0.14.1 --features binary
    fi
    mkdir -p "$remote_dir/s3" && ln -s "$PWD" "$remote_dir/s3/repo"
    s3port=$(free_port)
    "$s3s" --host 127.0.0.1 --port "$s3port" --access-key hrry-test-key \
        --secret-key hrry-test-secret "$remote_dir/s3" >"$remote_dir/s3s.log" 2>&1 &
    remote_pids+=($!)
    for _ in $(seq 50); do
        curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break
        sleep 0.1
    done
    export HRRY_TEST_S3_BUCKET=repo AWS_ACCESS_KEY_ID=hrry-test-key \
        AWS_SECRET_ACCESS_KEY=hrry-test-secret AWS_REGION=us-east-1 \
        AWS_ENDPOINT_URL="http://127.0.0.1:$s3port"
fi
