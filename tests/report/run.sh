#!/usr/bin/env bash
# `hrry report` pages opened in a real browser: Debian's chromium, headless, with
# a fresh profile and no background networking. Checks that the page's script
# runs without console errors, that the page asks for nothing over the network
# (its Content-Security-Policy blocks every fetch, and a blocked fetch is a
# console error), that the byte map of an invalid corpus file (a HRRYFILE, an
# archive, a stream, a conversation) has one mark per
# violation, and that a file whose tensor names are markup shows them as text (no
# script of theirs runs). Keeps a screenshot under target/report-test/.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
cargo build --quiet --bin hrry
hrry=target/debug/hrry
out=target/report-test
rm -rf "$out" && mkdir -p "$out"

browse() { # browse MODE PAGE [ARGS]: dump-dom or screenshot, console on stderr
    local profile
    profile=$(mktemp -d)
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 \
        --virtual-time-budget=3000 "${@:3}" "--$1" "file://$PWD/$2" 2>"$2.console"
    rm -rf "$profile"
}
fail() { echo "report test: $*" >&2; exit 1; }
console_errors() { grep -E 'CONSOLE|Uncaught|Content Security Policy|Refused to' "$1.console" || true; }

# An invalid corpus file with several violations.
invalid=corpus/invalid/HF-IDX-010.hrry
[ -f "$invalid" ] || invalid=$(ls corpus/invalid/*.hrry | head -1)
$hrry report "$invalid" -o "$out/invalid.html" 2>/dev/null
expected=$( ($hrry validate --json "$invalid" || true) | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"][0]["violations"]))')
browse dump-dom "$out/invalid.html" > "$out/invalid.dom"
grep -q 'data-ready="1"' "$out/invalid.dom" || fail "the page's script did not run"
marks=$(grep -o 'class="violation-mark"' "$out/invalid.dom" | wc -l)
[ "$marks" -eq "$expected" ] || fail "$marks marks for $expected violations of $invalid"
grep -q 'id="bytemap"' "$out/invalid.dom" || fail "no byte map"
errors=$(console_errors "$out/invalid.html")
[ -z "$errors" ] || fail "console: $errors"
grep -Eq '(src|href)="(https?:)?//' "$out/invalid.html" && fail "a network reference in the page"

# The same file with a reserved header byte set too: one mark per violation.
cp "$invalid" "$out/several.hrry"
printf '\xff' | dd of="$out/several.hrry" bs=1 seek=10 conv=notrunc status=none
$hrry report "$out/several.hrry" -o "$out/several.html" 2>/dev/null
several=$( ($hrry validate --json "$out/several.hrry" || true) | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"][0]["violations"]))')
[ "$several" -ge 2 ] || fail "$several violations in the file broken twice"
browse dump-dom "$out/several.html" > "$out/several.dom"
marks=$(grep -o 'class="violation-mark"' "$out/several.dom" | wc -l)
[ "$marks" -eq "$several" ] || fail "$marks marks for $several violations"
for rule in $( ($hrry validate --json "$out/several.hrry" || true) | python3 -c 'import json,sys; print(" ".join(v["rule"] for v in json.load(sys.stdin)["files"][0]["violations"]))'); do
    grep -q "href=\"#rule-$rule\"" "$out/several.dom" || fail "no mark links to $rule"
    grep -q "id=\"rule-$rule\"" "$out/several.dom" || fail "no finding for $rule"
done
errors=$(console_errors "$out/several.html")
[ -z "$errors" ] || fail "console: $errors"

# Tensor names and metadata that are markup.
python3 - "$out/hostile.safetensors" <<'PY'
import json, struct, sys
names = ['<script>document.title="pwned"</script>', '<img src=x onerror="document.title=\'pwned\'">']
header = {"__metadata__": {"note": "<script>document.title='pwned'</script>"}}
data = b""
for n in names:
    header[n] = {"dtype": "F32", "shape": [2], "data_offsets": [len(data), len(data) + 8]}
    data += struct.pack("<2f", 1.0, -2.0)
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
$hrry convert "$out/hostile.safetensors" "$out/hostile.hrry" >/dev/null
$hrry report "$out/hostile.hrry" -o "$out/hostile.html" 2>/dev/null
browse dump-dom "$out/hostile.html" > "$out/hostile.dom"
grep -q 'data-ready="1"' "$out/hostile.dom" || fail "the hostile page's script did not run"
grep -q '<title>hrry report' "$out/hostile.dom" || fail "the title changed: a name ran as script"
grep -q 'pwned</title>' "$out/hostile.dom" && fail "a name ran as script"
grep -q '&lt;script&gt;document.title="pwned"&lt;/script&gt;' "$out/hostile.dom" ||
    fail "the script name is not shown as text"
grep -q '&lt;img src=x onerror' "$out/hostile.dom" || fail "the img name is not shown as text"
grep -q '<img' "$out/hostile.dom" && fail "a name became an element"
errors=$(console_errors "$out/hostile.html")
[ -z "$errors" ] || fail "console: $errors"

# Thousands of tensors: the page loads, every row is there, sorting runs.
python3 - "$out/many.safetensors" <<'PY'
import json, struct, sys
header, data = {}, b""
for i in range(5000):
    header[f"blk.{i // 10}.t{i % 10}.weight"] = {"dtype": "F32", "shape": [4], "data_offsets": [len(data), len(data) + 16]}
    data += struct.pack("<4f", i, -i, 0.5, 2.0)
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
$hrry convert "$out/many.safetensors" "$out/many.hrry" >/dev/null
$hrry report "$out/many.hrry" -o "$out/many.html" 2>/dev/null
started=$(date +%s%N)
browse dump-dom "$out/many.html" > "$out/many.dom"
loaded_ms=$(( ($(date +%s%N) - started) / 1000000 ))
grep -q 'data-ready="1"' "$out/many.dom" || fail "the 5000-tensor page's script did not run"
rows=$(grep -o '<tr><td class="mono">blk\.' "$out/many.dom" | wc -l)
[ "$rows" -eq 5000 ] || fail "$rows tensor rows of 5000"
errors=$(console_errors "$out/many.html")
[ -z "$errors" ] || fail "console: $errors"
echo "5000 tensors: $(stat -c %s "$out/many.html") bytes of HTML, loaded by headless chromium in ${loaded_ms} ms"

# Archives, streams and conversations: one mark per violation, drawn in the
# browser without console errors.
for f in corpus/invalid/HOLO-WGT-002.holo corpus/invalid/HOLO-TBL-006.holo \
    "$(ls corpus/stream/invalid/*.hrrys | head -1)" "$(ls corpus/messages/invalid/*.hrrymsg | head -1)"; do
    page="$out/$(basename "$f").html"
    $hrry report "$f" -o "$page" 2>/dev/null
    want=$( ($hrry validate --json "$f" || true) | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"][0]["violations"]))')
    browse dump-dom "$page" > "$page.dom"
    grep -q 'data-ready="1"' "$page.dom" || fail "the script of the page of $f did not run"
    marks=$(grep -o 'class="violation-mark"' "$page.dom" | wc -l)
    [ "$marks" -eq "$want" ] && [ "$want" -ge 1 ] || fail "$marks marks for $want violations of $f"
    errors=$(console_errors "$page")
    [ -z "$errors" ] || fail "console: $errors"
done
# A valid archive: two rows (sections; Weights entries and Extensions inside them).
$hrry report corpus/valid/full.holo -o "$out/holo.html" 2>/dev/null
browse dump-dom "$out/holo.html" > "$out/holo.dom"
grep -q 'weight 0 body' "$out/holo.dom" || fail "the archive's Weights entries are not drawn"
errors=$(console_errors "$out/holo.html")
[ -z "$errors" ] || fail "console: $errors"

# A screenshot of a valid file's report, kept.
$hrry report corpus/valid/quant-per-block-int4-f16.hrry -o "$out/valid.html" 2>/dev/null
browse "screenshot=$PWD/$out/report.png" "$out/valid.html" --window-size=1280,1100 >/dev/null
browse "screenshot=$PWD/$out/report-invalid.png" "$out/several.html" --window-size=1280,900 >/dev/null
browse "screenshot=$PWD/$out/report-holo.png" "$out/holo.html" --window-size=1280,900 >/dev/null
[ -s "$out/report.png" ] && [ -s "$out/report-holo.png" ] || fail "no screenshot"
echo "report test: ok ($expected mark for $invalid, $several marks for $several violations of $out/several.hrry; hostile names shown as text)"
echo "screenshots: $PWD/$out/report.png $PWD/$out/report-invalid.png $PWD/$out/report-holo.png"
