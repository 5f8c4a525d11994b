#!/usr/bin/env bash
# A fuzzing campaign that accumulates: every target (or the ones named) for
# SECONDS each, from its committed corpus; what reaches new coverage is merged
# back into fuzz/corpus/TARGET/ (then minimised; inputs over 64 KiB dropped, the
# committed corpora staying under 25 MB), and the run is appended to the
# committed log fuzz/stats/campaigns.tsv, from which fuzz/stats/README.md (totals
# per target: executions so far, time, corpus size, coverage reached) is rebuilt.
#
#   fuzz/campaign.sh SECONDS [TARGET...]
#   fuzz/campaign.sh --summary            # only rebuild fuzz/stats/README.md
#   fuzz/campaign.sh --prune              # only bring the corpora under the cap
#
# HRRY_FUZZ_SEEDS=DIR takes the seeds from DIR (made earlier by `fuzz_seeds
# corpus DIR`) instead of building and running the seed generator.
# HRRY_FUZZ_JOBS=N runs N targets at a time (default 1), one process each.
# HRRY_FUZZ_UNTIL=N stops a target early once its executions over all campaigns
# reach N (a target already there is skipped); SECONDS stays the most it runs.
# HRRY_FUZZ_SANITIZER=none fuzzes a build without AddressSanitizer (in
# fuzz/target/nosan/): several times the executions per second, at the cost of
# ASan's checks of the unsafe code and of libFuzzer's -malloc_limit_mb (which
# needs ASan's allocator hooks; -rss_limit_mb still applies). The log records
# which build ran (column `build`); the default is `address`, as in CI.
# HRRY_FUZZ_TRACE_COMPARES=0 builds without libFuzzer's comparison tracing
# (`--no-trace-compares`, build `none-notc` or `address-notc`, in its own
# fuzz/target/ folder): the structure-aware targets run about twice as fast, the
# corpus features are the same (no value profile is used), and what is lost is
# the mutations that copy compared values into the input.
#
# Commit fuzz/corpus/ and fuzz/stats/ afterwards. A target that crashes, leaks,
# hangs or over-allocates is recorded as such (its input under
# fuzz/artifacts/TARGET/, to be kept as a regression in tests/fuzz_findings/) and
# its new inputs are not merged. Runs under `nice`: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."

stats=fuzz/stats
log_tsv=$stats/campaigns.tsv
cap_bytes=$((25 * 1024 * 1024))
mkdir -p "$stats"
if [ ! -s "$log_tsv" ]; then
    printf 'date_utc\tcommit\ttarget\tseconds\texecutions\tcorpus_files\tcorpus_bytes\tedges\tfeatures\tresult\tbuild\n' >"$log_tsv"
fi

# fuzz/stats/README.md from the log: one row per target, totals over campaigns.
summarize() {
    local cov=""
    if [ -s "$stats/line_coverage.tsv" ]; then
        cov=$(tail -n 1 "$stats/line_coverage.tsv" | awk -F'\t' '{ print $3 " (" $1 ", commit " $2 ")" }')
    fi
    {
        echo "# Fuzzing statistics"
        echo
        echo "Rebuilt by \`fuzz/campaign.sh\` from [campaigns.tsv](campaigns.tsv), the"
        echo "append-only log of every campaign run (one line per target per run). The"
        echo "executions and time add up over campaigns; corpus size and coverage are"
        echo "those after the latest run (edges and features as libFuzzer counts them;"
        echo "a line of 0 seconds records a change to the corpus alone, such as pruning)."
        echo "Executions under ASan are those of the build CI fuzzes (AddressSanitizer,"
        echo "LeakSanitizer, libFuzzer's allocation limit); the rest ran without a"
        echo "sanitizer (\`HRRY_FUZZ_SANITIZER=none\`), with the same targets and properties."
        echo "Findings count the campaigns that ended on a crash, a hang or an over-allocation"
        echo "(their executions count too); each is fixed, its input kept under"
        echo "[tests/fuzz_findings/](../../tests/fuzz_findings) with a test."
        echo
        echo "| target | campaigns | seconds | executions | under ASan | corpus files | corpus bytes | edges | features | findings |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        awk -F'\t' 'NR > 1 {
                t = $3
                if (!(t in runs)) order[n++] = t
                if ($4 > 0) runs[t]++
                secs[t] += $4; execs[t] += $5
                if ($11 !~ /^none/) asan[t] += $5
                files[t] = $6; bytes[t] = $7
                if ($8 != "?") { edges[t] = $8; ft[t] = $9 }
                if ($10 ~ /^finding/) found[t]++
            }
            END {
                for (i = 0; i < n; i++) {
                    t = order[i]
                    printf "| %s | %d | %d | %.0f | %.0f | %d | %d | %s | %s | %d |\n",
                        t, runs[t], secs[t], execs[t], asan[t], files[t], bytes[t], edges[t], ft[t], found[t] + 0
                }
            }' "$log_tsv"
        echo
        if [ -n "$cov" ]; then
            echo "Line coverage of the parsing and validating code by the committed corpora"
            echo "(\`fuzz/coverage.sh\`, latest): $cov; history in"
            echo "[line_coverage.tsv](line_coverage.tsv)."
        fi
    } >"$stats/README.md"
}

# Over the cap, the largest inputs go first (whole files of the largest
# conformance-file mutants, mostly alignment padding), until the corpora fit; each
# target that lost inputs gets a line of 0 seconds with its new size.
prune_to_cap() {
    local total file size t
    total=$(du -sb fuzz/corpus | awk '{ print $1 }')
    [ "$total" -le "$cap_bytes" ] && return 0
    declare -A pruned=()
    while read -r size file; do
        [ "$total" -le "$cap_bytes" ] && break
        rm -f "$file"
        total=$((total - size))
        t=${file#fuzz/corpus/}
        pruned[${t%%/*}]=$((${pruned[${t%%/*}]:-0} + 1))
    done < <(find fuzz/corpus -type f -printf '%s %p\n' | sort -rn)
    for t in "${!pruned[@]}"; do
        printf '%s\t%s\t%s\t0\t0\t%s\t%s\t?\t?\tpruned-to-cap:%s\t-\n' \
            "$(date -u +%Y-%m-%dT%H:%MZ)" "$(git rev-parse --short HEAD)" "$t" \
            "$(find "fuzz/corpus/$t" -type f | wc -l)" "$(du -sb "fuzz/corpus/$t" | awk '{ print $1 }')" \
            "${pruned[$t]}" >>"$log_tsv"
        echo "campaign: $t: ${pruned[$t]} of its largest inputs dropped to keep the corpora under $cap_bytes bytes"
    done
}

if [ "${1:-}" = "--prune" ]; then
    prune_to_cap
    summarize
    exit 0
fi

if [ "${1:-}" = "--summary" ]; then
    summarize
    cat "$stats/README.md"
    exit 0
fi

secs=${1:?usage: fuzz/campaign.sh SECONDS [TARGET...] | --summary}
shift

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "campaign: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# One scratch folder per campaign, so that campaigns may run side by side.
scratch=fuzz/scratch/campaign.$$
rm -rf "$scratch"
mkdir -p "$scratch/seeds"
trap 'rm -rf "$scratch"' EXIT
if [ -n "${HRRY_FUZZ_SEEDS:-}" ]; then
    # Seeds made earlier (`fuzz_seeds corpus DIR`), to spare a release build.
    cp -r "$HRRY_FUZZ_SEEDS/." "$scratch/seeds/"
else
    nice cargo run --release --quiet -p hrry-tools --bin fuzz_seeds -- corpus "$scratch/seeds"
fi

# shellcheck source=fuzz/libfuzzer.sh
source fuzz/libfuzzer.sh
export RUSTC_BOOTSTRAP=1 CARGO_TERM_COLOR=never
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi
build=${HRRY_FUZZ_SANITIZER:-address}
case "$build" in
    address) build_flags=() ;;
    none) build_flags=(-s none --target-dir fuzz/target/nosan) ;;
    *) echo "campaign: HRRY_FUZZ_SANITIZER is address or none, not $build" >&2; exit 2 ;;
esac
case "${HRRY_FUZZ_TRACE_COMPARES:-1}" in
    1) ;;
    0)
        if [ "$build" = none ]; then
            build_flags=(-s none --no-trace-compares --target-dir fuzz/target/notc)
        else
            build_flags=(--no-trace-compares --target-dir fuzz/target/asan-notc)
        fi
        build=$build-notc
        ;;
    *) echo "campaign: HRRY_FUZZ_TRACE_COMPARES is 0 or 1, not $HRRY_FUZZ_TRACE_COMPARES" >&2; exit 2 ;;
esac
jobs=${HRRY_FUZZ_JOBS:-1}
# The targets write each input to a temporary file (and mirror it): in memory
# where the machine has a tmpfs, so that disk writes do not set the pace.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
nice cargo fuzz build "${build_flags[@]}"

commit=$(git rev-parse --short HEAD)

# One target's campaign: fuzz, merge what is new, minimise, log one line.
campaign() {
    local t=$1 line log status execs done_line edges ft result files bytes runs=()
    if [ -n "${HRRY_FUZZ_UNTIL:-}" ]; then
        local so_far
        so_far=$(awk -F'\t' -v t="$t" '$3 == t { n += $5 } END { printf "%.0f", n }' "$log_tsv")
        if [ "$so_far" -ge "$HRRY_FUZZ_UNTIL" ]; then
            echo "=== campaign: $t has $so_far executions, not below $HRRY_FUZZ_UNTIL: skipped"
            return 0
        fi
        runs=(-runs=$((HRRY_FUZZ_UNTIL - so_far)))
    fi
    echo "=== campaign: $t for ${secs}s ${runs[*]} ($build)"
    mkdir -p "$scratch/new/$t" "$scratch/seeds/$t" "fuzz/corpus/$t" "fuzz/artifacts/$t"
    log="fuzz/artifacts/$t.campaign.log"
    status=0
    local started=$SECONDS
    nice timeout $((secs + 600)) cargo fuzz run "${build_flags[@]}" "$t" \
        "$scratch/new/$t" "fuzz/corpus/$t" "$scratch/seeds/$t" -- \
        -max_total_time="$secs" "${runs[@]}" "${LIBFUZZER_OPTIONS[@]}" \
        >"$log" 2>&1 || status=$?
    # The time it ran (shorter than asked when it stopped on a finding or a run count).
    local took=$((SECONDS - started))
    execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ print $2 }' | tail -n 1)
    done_line=$(grep -E '#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1 || true)
    edges=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$done_line")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$done_line")
    result=ok
    if [ "$status" -ne 0 ]; then
        result="finding:$(grep -oE 'fuzz/artifacts/[^ ]+' "$log" | tail -n 1 || echo "exit-$status")"
        grep -E 'Test unit written to|^SUMMARY|panicked at' "$log" || true
    else
        # Keep what reached new coverage, then minimise the whole corpus.
        nice cargo fuzz run "${build_flags[@]}" "$t" "fuzz/corpus/$t" "$scratch/new/$t" "$scratch/seeds/$t" -- \
            -merge=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
            >"$log.merge" 2>&1
        nice cargo fuzz cmin "${build_flags[@]}" "$t" "fuzz/corpus/$t" -- -timeout=10 -rss_limit_mb=2048 \
            >"$log.cmin" 2>&1
        # Inputs over 64 KiB are mutants of the largest conformance files, which
        # every run seeds afresh from corpus/: left out, to keep under the cap.
        find "fuzz/corpus/$t" -type f -size +64k -delete
    fi
    files=$(find "fuzz/corpus/$t" -type f | wc -l)
    bytes=$(du -sb "fuzz/corpus/$t" | awk '{ print $1 }')
    # One short line, appended whole: campaigns running side by side share the log.
    line=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' \
        "$(date -u +%Y-%m-%dT%H:%MZ)" "$commit" "$t" "$took" "${execs:-0}" \
        "$files" "$bytes" "${edges:-?}" "${ft:-?}" "$result" "$build")
    echo "$line" >>"$log_tsv"
    echo "$line"
}

for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n || true
    done
    campaign "$t" &
done
wait

prune_to_cap
summarize
cat "$stats/README.md"
echo "campaign: committed corpora $(du -sb fuzz/corpus | awk '{ print $1 }') bytes (cap $cap_bytes)"
