#!/usr/bin/env bash
# The Rust crates as crates.io would take them: `cargo publish --dry-run` of hrry and
# hrry-capi (which packages each, builds each from its package — hrry-capi against
# the packaged hrry, not yet on crates.io — and runs crates.io's manifest checks,
# without uploading); each .crate under crates.io's 10 MB; then the unpacked hrry
# crate used as a path dependency by tests/downstream's program (the core alone)
# and installed with `cargo install --locked --path` (the CLI; a debug build, which
# reuses what the dry run compiled). Prints the size of each crate.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/package-rust"
rm -rf "$out"
mkdir -p "$out"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)

# Cargo unpacks each packaged crate into a registry source folder named after the
# dry run's temporary registry, and reuses a folder it finds there: one left by an
# earlier run of another commit would be built in place of this commit's package.
# Cargo never rebuilds a registry crate of a version it has built, so the builds of
# an earlier run's packages (found by their sources under registry/src) go too.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf "$cargo_home"/registry/src/*/hrry-"$version" "$cargo_home"/registry/src/*/hrry-capi-"$version"
for dep in "$target"/debug/deps/hrry-*.d "$target"/debug/deps/hrry_capi-*.d; do
    [ -f "$dep" ] && grep -q "/registry/src/" "$dep" || continue
    hash=${dep##*-}
    hash=${hash%.d}
    rm -rf "$target"/debug/.fingerprint/hrry-"$hash" "$target"/debug/.fingerprint/hrry-capi-"$hash"
done
# The warnings about tests and benches left out of the package are expected.
if ! cargo publish --dry-run --quiet -p hrry -p hrry-capi >"$out/publish.log" 2>&1; then
    cat "$out/publish.log" >&2
    echo "cargo publish --dry-run failed" >&2
    exit 1
fi
grep -v -E "^warning: ignoring (test|benchmark|example)" "$out/publish.log" || true
limit=$((10 * 1000 * 1000))
# Where the dry run leaves a .crate: target/package/ for one package, its
# tmp-crate/ folder when it packages several at once (cargo 1.90 and later).
crate_file() {
    local f
    for f in "$target/package/$1-$version.crate" "$target/package/tmp-crate/$1-$version.crate"; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
    echo "no $1-$version.crate under $target/package" >&2
    exit 1
}
for crate in hrry hrry-capi; do
    file=$(crate_file "$crate")
    size=$(stat -c %s "$file")
    echo "$crate-$version.crate: $size bytes ($(tar tzf "$file" | wc -l) files)"
    if [ "$size" -ge "$limit" ]; then
        echo "$crate-$version.crate is over crates.io's 10 MB" >&2
        exit 1
    fi
done

# Unpacked outside this workspace, as a user's download is (the builds still share
# this checkout's target folder, for the dependencies).
away=$(mktemp -d)
# The unpacked crate's builds share this checkout's target folder, and with it the
# output folder of its build script (cargo's hash of a path package does not depend
# on where it lies), which then names the corpus under $away. Touching build.rs
# makes the next build of this checkout run its build script again.
trap 'rm -rf "$away"; touch "$root/build.rs"' EXIT
tar xzf "$(crate_file hrry)" -C "$away"
unpacked="$away/hrry-$version"
# The downstream program of tests/downstream, depending on the unpacked crate.
mkdir -p "$away/downstream/src"
cp tests/downstream/src/main.rs "$away/downstream/src/"
sed -e "s|^hrry = { path = \"../..\"|hrry = { path = \"$unpacked\"|" \
    tests/downstream/Cargo.toml >"$away/downstream/Cargo.toml"
grep -q "path = \"$unpacked\"" "$away/downstream/Cargo.toml"
# The crate's own lock file: the versions this repository builds with.
cp "$unpacked/Cargo.lock" "$away/downstream/Cargo.lock"
CARGO_TARGET_DIR="$target" cargo run --quiet --manifest-path "$away/downstream/Cargo.toml" -- \
    corpus/valid/basic.hrry

CARGO_TARGET_DIR="$target" cargo install --quiet --locked --debug --path "$unpacked" \
    --root "$out/install"
"$out/install/bin/hrry" validate corpus/valid/basic.hrry
if "$out/install/bin/hrry" validate --sarif corpus/invalid/HF-CRC-001.hrry >"$out/installed.sarif"; then
    echo "the installed hrry passed an invalid file" >&2
    exit 1
fi
grep -q '"ruleId": "HF-CRC-001"' "$out/installed.sarif"
echo "packaged crates: publish dry run, downstream build and cargo install passed"
