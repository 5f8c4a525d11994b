#!/usr/bin/env bash
# Measures `hrry stream pack F -o - | hrry stream unpack - -o G` on a model-sized
# HRRYFILE: peak resident memory of each process (/usr/bin/time -v) and wall time
# against `cat` doing the same plumbing, measured in the same run.
#
#   tests/measure_stream.sh [WORK_DIR [MIB [RUNS]]]    (default /tmp/hrry-stream 1024 5)
#
# Builds the release binary and `tools/src/bin/big_model.rs`, writes WORK_DIR/model.hrry
# (MIB MiB; the largest tensor is a quarter of it) unless present, warms the page
# cache, then alternates RUNS times:
#   pipeline to a file   hrry stream pack F -o - | hrry stream unpack - -o G
#   baseline             cat F | cat > C; sync C      (unpack syncs G before renaming it)
#   pipeline, no disk    hrry stream pack F -o - | hrry stream unpack - -o - > /dev/null
#   baseline             cat F | cat > /dev/null
#   read alone           cat F > /dev/null
# and prints the medians, the speed of each pipeline relative to its baseline
# (1.0 = as fast as cat; the target is at least 0.5) and the peak RSS of pack and
# unpack, with the load average before and after the runs. Checks that packing G
# gives the same stream as packing F.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/hrry-stream}
mib=${2:-1024}
runs=${3:-5}
mkdir -p "$work"
cargo build --release --quiet -p hrry --bin hrry -p hrry-tools --bin big_model
hrry=target/release/hrry
F=$work/model.hrry G=$work/unpacked.hrry C=$work/copy.bin
[[ -f $F ]] || target/release/big_model "$F" "$mib"
cat "$F" > /dev/null
# The machine may be shared: say how busy it was while the timings were taken.
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)

now() { date +%s.%N; }
declare -A times
run() { # name, command
    local s e
    s=$(now); bash -c "$2"; e=$(now)
    times[$1]+="$(echo "$e - $s" | bc) "
}
for _ in $(seq "$runs"); do
    run pipeline "/usr/bin/time -v -o $work/pack.time $hrry stream pack $F -o - | /usr/bin/time -v -o $work/unpack.time $hrry stream unpack - -o $G"
    run cat_file "cat $F | cat > $C; sync $C"
    run pipeline_null "$hrry stream pack $F -o - | $hrry stream unpack - -o - > /dev/null"
    run cat_null "cat $F | cat > /dev/null"
    run read "cat $F > /dev/null"
done
load_end=$(load)
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m() { echo "${times[$1]}" | median; }
rss() { awk -F': ' '/Maximum resident/ {print $2}' "$1"; }
"$hrry" stream pack "$F" -o - | cmp -s - <("$hrry" stream pack "$G" -o -) \
    || { echo "measure_stream: G does not pack to F's stream" >&2; exit 1; }
size=$(stat -c %s "$F")
echo "file: $F, $size bytes; $runs runs, medians"
echo "load average (1, 5, 15 min): $load_start at the start, $load_end at the end"
printf "  %-58s %6.2f s\n" "hrry stream pack F -o - | hrry stream unpack - -o G" "$(m pipeline)"
printf "  %-58s %6.2f s\n" "cat F | cat > C; sync C" "$(m cat_file)"
printf "  %-58s %6.2f s\n" "hrry stream pack F -o - | hrry stream unpack - -o - >/dev/null" "$(m pipeline_null)"
printf "  %-58s %6.2f s\n" "cat F | cat > /dev/null" "$(m cat_null)"
printf "  %-58s %6.2f s\n" "cat F > /dev/null" "$(m read)"
echo "speed relative to cat (1.0 = as fast; target >= 0.5):"
printf "  to a file: %.2f   through /dev/null: %.2f   vs reading alone: %.2f\n" \
    "$(echo "$(m cat_file) / $(m pipeline)" | bc -l)" \
    "$(echo "$(m cat_null) / $(m pipeline_null)" | bc -l)" \
    "$(echo "$(m read) / $(m pipeline_null)" | bc -l)"
echo "peak RSS (last run): pack $(rss "$work/pack.time") KiB, unpack $(rss "$work/unpack.time") KiB"
rm -f "$G" "$C"
echo "(left $F for further runs; remove $work when done)"
