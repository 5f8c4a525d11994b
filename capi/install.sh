#!/usr/bin/env bash
# Installs libhrry under a prefix: lib/libhrry.so, lib/libhrry.a, include/hrry.h and
# lib/pkgconfig/hrry.pc (with the prefix written in).
#
#   capi/install.sh [--no-build] [PREFIX]      PREFIX defaults to /usr/local
#
# Builds the library first (`cargo build -p hrry-capi --release`) unless --no-build.
set -euo pipefail
build=1
if [[ "${1:-}" == "--no-build" ]]; then
    build=0
    shift
fi
prefix="${1:-/usr/local}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
if (( build )); then
    (cd "$root" && cargo build -p hrry-capi --release)
fi
target="${CARGO_TARGET_DIR:-$root/target}/release"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$target/libhrry.so" "$prefix/lib/libhrry.so"
install -m 644 "$target/libhrry.a" "$prefix/lib/libhrry.a"
install -m 644 "$here/include/hrry.h" "$prefix/include/hrry.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" "$here/hrry.pc.in" \
    > "$prefix/lib/pkgconfig/hrry.pc"
echo "installed libhrry $version under $prefix"
