#!/usr/bin/env bash
# Bounded fuzzing, as CI runs it: every target (or the ones named) for SECONDS each,
# with AddressSanitizer and LeakSanitizer on, one after another, starting from the
# committed corpora.
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# Installs cargo-fuzz if it is missing, builds all targets once, then runs each
# from its committed corpus fuzz/corpus/TARGET/ and from seeds made from corpus/
# (`cargo run --release -p hrry-tools --bin fuzz_seeds`). Both are only read: libFuzzer writes what it
# finds into the first corpus folder it is given, a scratch one under
# fuzz/scratch/run/ (git-ignored), so a run never changes the tree. fuzz/campaign.sh
# is what merges findings back into fuzz/corpus/.
#
# Exits non-zero if any target crashes, leaks, times out on an input or runs out
# of memory; the input is saved under fuzz/artifacts/TARGET/ and its path printed.
# A summary of libFuzzer's final statistics for every target ends the output (and
# is written to fuzz/artifacts/summary.txt).
set -euo pipefail
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

scratch=fuzz/scratch/run
rm -rf "$scratch"
mkdir -p "$scratch/seeds" "$scratch/new"

# Before RUSTC_BOOTSTRAP is set, so that this reuses the release build of the library
# (the `hrry` binary's, which .ci/run's earlier steps made).
echo "fuzz: seeds from corpus/"
cargo run --release --quiet -p hrry-tools --bin fuzz_seeds -- corpus "$scratch/seeds"

# cargo fuzz needs nightly-only flags; the stable toolchain accepts them with this.
# shellcheck source=fuzz/libfuzzer.sh
source fuzz/libfuzzer.sh
export RUSTC_BOOTSTRAP=1

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

echo "fuzz: building ${#targets[@]} targets (AddressSanitizer)"
cargo fuzz build

mkdir -p fuzz/artifacts
summary=fuzz/artifacts/summary.txt
: > "$summary"
failed=()
for t in "${targets[@]}"; do
    echo
    echo "=== fuzz $t for ${secs}s"
    if [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
        echo "fuzz: fuzz/corpus/$t is missing or empty (every target has a committed corpus)"
        failed+=("$t")
        continue
    fi
    mkdir -p "$scratch/new/$t" "$scratch/seeds/$t" "fuzz/artifacts/$t"
    log="fuzz/artifacts/$t.log"
    status=0
    timeout $((secs + 300)) cargo fuzz run "$t" \
        "$scratch/new/$t" "fuzz/corpus/$t" "$scratch/seeds/$t" -- \
        -max_total_time="$secs" "${LIBFUZZER_OPTIONS[@]}" \
        >"$log" 2>&1 || status=$?
    tail -n 25 "$log"
    {
        echo "== $t (exit $status)"
        grep -E '^Done [0-9]+ runs in [0-9]+ second|^stat::|INITED|DONE' "$log" || true
        echo "new inputs this run (not kept): $(ls "$scratch/new/$t" | wc -l)"
    } >>"$summary"
    if [ "$status" -ne 0 ]; then
        failed+=("$t")
        grep -E 'Test unit written to|^SUMMARY|ERROR: libFuzzer|panicked at' "$log" || true
    fi
done

echo
echo "=== fuzz summary (${secs}s per target)"
cat "$summary"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]} (inputs under fuzz/artifacts/; minimise with"
    echo "  RUSTC_BOOTSTRAP=1 cargo fuzz tmin TARGET fuzz/artifacts/TARGET/crash-...)"
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash, leak or timeout"
