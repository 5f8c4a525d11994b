#!/usr/bin/env bash
# Line coverage of the parsing and validating code by the committed fuzz corpora.
#
#   fuzz/coverage.sh [--record] [--ptrace]
#
# Replays every target's committed corpus (fuzz/corpus/TARGET/) through the
# target's body — the `corpus::` tests of tests/fuzz_regressions.rs, which run the
# very code the fuzzers run — under cargo-tarpaulin (installed if missing), then
# prints line coverage per module and, last, the total as `line coverage: NN.N%`.
#
# Engines. By default tarpaulin's LLVM engine: rustc's source-based coverage
# (`-C instrument-coverage`, on stable), whose counters tarpaulin reads itself, so
# no LLVM tools are needed; a line counts as run when a code region on it ran, so
# the argument lines of a call that ran count. `--ptrace` uses the breakpoint
# engine instead (one test thread, unoptimised code), the figures recorded before
# 2026-12-03T16:00Z: it misses lines of statements that ran (argument lines,
# many `return;`), so it reads lower for the same corpora. Modules, as paths
# under src/:
#
#   decode    file/{mod,open,reader,sequential,error}.rs, source.rs (opening, the
#             reader's decode pass, the sequential reader)
#   validate  validate/ (every rule) but conformance.rs (the rule-to-spec map that
#             `hrry rules --markdown` prints: documentation, not validation)
#   schema    schema/ (the wire decoders)
#   stream    stream/ but writer.rs (stream reader and validator, messages,
#             conversation, pack and unpack)
#   holo      holo/ but writer.rs and kappa.rs (validator, loader, inspect)
#   quant     quant/ but quantize.rs (dequantization kernels and parameters)
#   layout    layout/ (dense addressing, sparse, composites)
#
# The writers (file/writer.rs, stream/writer.rs, holo/writer.rs,
# quant/quantize.rs), the CLI, the
# converters, the server and the corpus generator are not parsing or validating
# code and are not counted. With --record, the total is appended to
# fuzz/stats/line_coverage.tsv (committed, read by fuzz/campaign.sh --summary).
# The per-file report is left in fuzz/coverage/ (git-ignored): the lines no input
# reached, per file, are the last column of tarpaulin-report-files.tsv. HRRY_FUZZ_CORPUS=DIR
# measures a copy of the corpora instead (DIR/TARGET/), e.g. while a campaign runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-tarpaulin >/dev/null 2>&1; then
    echo "coverage: installing cargo-tarpaulin"
    cargo install cargo-tarpaulin --locked
fi

record="" engine=llvm
for arg in "$@"; do
    case "$arg" in
        --record) record=--record ;;
        --ptrace) engine=ptrace ;;
        *) echo "usage: fuzz/coverage.sh [--record] [--ptrace]" >&2; exit 2 ;;
    esac
done

out=fuzz/coverage
mkdir -p "$out"
if [ "$engine" = ptrace ]; then
    # Breakpoints land mid-instruction in optimised code and race between threads.
    run=(env CARGO_PROFILE_TEST_OPT_LEVEL=0 nice cargo tarpaulin --engine ptrace
        --target-dir target/tarpaulin)
    threads=1
else
    run=(nice cargo tarpaulin --engine llvm --target-dir target/tarpaulin-llvm)
    threads=2
fi
"${run[@]}" --skip-clean \
    --test fuzz_regressions \
    --out Json --output-dir "$out" \
    -- corpus:: --test-threads=$threads >"$out/tarpaulin.log" 2>&1 || {
    tail -n 40 "$out/tarpaulin.log"
    echo "coverage: tarpaulin failed (log: $out/tarpaulin.log)"
    exit 1
}
grep -E 'test result' "$out/tarpaulin.log" || true

python3 - "$out/tarpaulin-report.json" "$record" "$engine" <<'EOF'
import json, subprocess, sys, time

report = json.load(open(sys.argv[1]))
modules = [
    ("decode", lambda p: p in ("file/mod.rs", "file/open.rs", "file/reader.rs",
                               "file/sequential.rs", "file/error.rs", "source.rs")),
    ("validate", lambda p: p.startswith("validate/") and p != "validate/conformance.rs"),
    ("schema", lambda p: p.startswith("schema/")),
    ("stream", lambda p: p.startswith("stream/") and p != "stream/writer.rs"),
    ("holo", lambda p: p.startswith("holo/") and p not in ("holo/writer.rs", "holo/kappa.rs")),
    ("quant", lambda p: p.startswith("quant/") and p != "quant/quantize.rs"),
    ("layout", lambda p: p.startswith("layout/")),
]
totals = {name: [0, 0] for name, _ in modules}
files = []
for f in report["files"]:
    parts = f["path"]
    if "src" not in parts:
        continue
    rel = "/".join(parts[len(parts) - parts[::-1].index("src"):])
    for name, member in modules:
        if member(rel):
            totals[name][0] += f["covered"]
            totals[name][1] += f["coverable"]
            missed = sorted(t["line"] for t in f["traces"] if t["stats"]["Line"] == 0)
            files.append((name, rel, f["covered"], f["coverable"], missed))
            break

print(f"{'module':<10} {'lines':>13}  coverage")
covered = coverable = 0
for name, _ in modules:
    c, n = totals[name]
    covered += c
    coverable += n
    pct = 100.0 * c / n if n else 0.0
    print(f"{name:<10} {c:>6}/{n:<6}  {pct:5.1f}%")
def ranges(lines):
    """1, 2, 3, 7 as "1-3 7"."""
    out = []
    for l in lines:
        if out and out[-1][1] == l - 1:
            out[-1][1] = l
        else:
            out.append([l, l])
    return " ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out)

with open(sys.argv[1].replace(".json", "-files.tsv"), "w") as out:
    for name, rel, c, n, missed in sorted(files):
        out.write(f"{name}\tsrc/{rel}\t{c}\t{n}\t{ranges(missed)}\n")
total = 100.0 * covered / coverable if coverable else 0.0
if sys.argv[2] == "--record":
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    path = "fuzz/stats/line_coverage.tsv"
    try:
        new = open(path).read() == ""
    except FileNotFoundError:
        new = True
    with open(path, "a") as log:
        if new:
            log.write("date_utc\tcommit\tline_coverage\tcovered\tcoverable\tengine\n")
        log.write(f"{time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}\t{commit}\t"
                  f"{total:.1f}%\t{covered}\t{coverable}\t{sys.argv[3]}\n")
print(f"line coverage: {total:.1f}%")
EOF
