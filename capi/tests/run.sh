#!/usr/bin/env bash
# The C ABI from C and C++: builds libhrry in release, runs the crate's Rust tests
# (which include the check that include/hrry.h is current), installs the library
# with hrry.h and hrry.pc into a prefix under target/, compiles tests/capi_test.c
# with the system C compiler (linked to libhrry.so through pkg-config) and as C++
# (linked to libhrry.a), both under AddressSanitizer and UndefinedBehaviorSanitizer,
# and runs them against the corpus and the release `hrry` binary (for `hrry
# export`). Then compiles and runs the README's example with `cc app.c -lhrry`,
# checks hrry_open's peak memory over the hostile set and the memory cap
# (tests/memory_test.c), and scores the conformance adapter
# tests/conformance_testee.c with `hrry conformance`.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/capi-test"
prefix="$out/prefix"

# The machine has cc and c++ with the sanitizer runtimes; pkg-config may be missing.
if ! command -v pkg-config >/dev/null; then
    apt-get update -qq && apt-get install -y -qq pkgconf >/dev/null
fi

cargo build --release --quiet --bin hrry
cargo build --release --quiet -p hrry-capi
# Release, so that the core built just above is reused.
cargo test --release --quiet -p hrry-capi
capi/install.sh --no-build "$prefix" >/dev/null
mkdir -p "$out/work"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags="$(pkg-config --cflags hrry)"
libs="$(pkg-config --libs hrry)"
static_libs="$(pkg-config --static --libs-only-l hrry | sed 's/-lhrry//')"
libdir="$(pkg-config --variable=libdir hrry)"
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer -g -O1 -Wall -Wextra -Werror -Wno-format-truncation)

# shellcheck disable=SC2086 # pkg-config output is a list of flags
cc -std=c99 "${sanitize[@]}" $cflags capi/tests/capi_test.c -o "$out/capi_test_c" \
    $libs -lpthread -Wl,-rpath,"$libdir"
# shellcheck disable=SC2086
c++ -x c++ -std=c++11 "${sanitize[@]}" $cflags capi/tests/capi_test.c -x none \
    -o "$out/capi_test_cpp" "$libdir/libhrry.a" $static_libs

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for lang in c cpp; do
    echo "capi_test ($lang):"
    "$out/capi_test_$lang" "$root/corpus" "$target/release/hrry" "$out/work" || status=1
done

echo "README example:"
awk '/^```c$/ { if (!done) { on = 1; next } } /^```$/ { if (on) { on = 0; done = 1 } } on' \
    capi/README.md > "$out/app.c"
# shellcheck disable=SC2086
cc "${sanitize[@]}" $cflags "$out/app.c" -o "$out/app" -L"$libdir" -lhrry -Wl,-rpath,"$libdir"
"$out/app" corpus/valid/quant-per-block-int4-f16.hrry
"$out/app" corpus/valid/all_element_types.hrry >/dev/null
# It prints KV values and type and layout names.
"$out/app" corpus/valid/kv_all_types.hrry >"$out/app.out"
grep -q '^uint64 = 18446744073709551615$' "$out/app.out" &&
    grep -q '^x: float32, row-major, shape \[1\]' "$out/app.out" ||
    { cat "$out/app.out" >&2; status=1; }
if "$out/app" corpus/invalid/HF-CRC-001.hrry 2>"$out/app.err"; then
    echo "the example opened an invalid file" >&2
    status=1
fi
grep -q "HRRY_INVALID: .*HF-CRC-001 at offset" "$out/app.err" || { cat "$out/app.err" >&2; status=1; }

# hrry_open's memory over the hostile set (each file in a child process, its
# VmHWM against the bound docs/security.md states) and the memory cap of
# hrry_limits: built without the sanitizers, whose shadow memory would count.
echo "memory bound and cap (capi/tests/memory_test.c):"
hostile="$out/hostile"
rm -rf "$hostile"
cargo run --release --quiet -p hrry-tools --bin hostile_files "$hostile" 1 >/dev/null
# shellcheck disable=SC2086
cc -std=c99 -O2 -Wall -Wextra -Werror $cflags capi/tests/memory_test.c -o "$out/memory_test" \
    $libs -Wl,-rpath,"$libdir"
"$out/memory_test" "$hostile" "$hostile/kv-uint64-dense-131072.hrry" || status=1

# The conformance adapter over the C ABI (tests/conformance_testee.c), under the
# sanitizers, scored by `hrry conformance` on its built-in corpus from a folder
# outside the repository: no case may fail.
echo "conformance adapter:"
# shellcheck disable=SC2086
cc -std=c99 "${sanitize[@]}" $cflags capi/tests/conformance_testee.c -o "$out/conformance_testee" \
    $libs -Wl,-rpath,"$libdir"
away="$(mktemp -d)"
begin=$(date +%s.%N)
if ! (cd "$away" && "$target/release/hrry" conformance --json \
        --markdown "$out/conformance.md" -- "$out/conformance_testee" >"$out/conformance.json"); then
    echo "the C adapter failed conformance cases:" >&2
    cat "$out/conformance.md" >&2
    status=1
fi
end=$(date +%s.%N)
rm -rf "$away"
python3 - "$out/conformance.json" "$begin" "$end" <<'PY' || status=1
import collections, json, sys
doc = json.load(open(sys.argv[1]))
counts = collections.Counter(c["status"] for c in doc["cases"])
tiers = {t: doc["summary"]["tiers"][t]["pass"] for t in ("verdict", "rule", "read")}
print(f"  {dict(counts)}; passes by tier {tiers}; {float(sys.argv[3]) - float(sys.argv[2]):.1f} s")
assert set(counts) <= {"pass", "skip"}, counts
assert all(n > 0 for n in tiers.values()), tiers
PY
exit $status
