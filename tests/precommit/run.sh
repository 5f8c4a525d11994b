#!/usr/bin/env bash
# The pre-commit hooks of .pre-commit-hooks.yaml with the real pre-commit (PyPI, in a
# venv under target/): a temporary git repository whose .pre-commit-config.yaml
# names this checkout (`repo: <its path>`, `rev: <HEAD>`), as a user's names the
# published repository. A valid HRRYFILE commits; an invalid one, and an invalid
# stream, are refused with the rule ID in the output; `args` reach hrry (a
# hardening-only finding passes with `--permissive`).
#
# The hook tested is `hrry-validate-system` (the release `hrry`, put on PATH); the
# `hrry-validate` hook (language: rust) runs the same entry after pre-commit's
# `cargo install` of this checkout, a release build of several minutes: it is
# tested too when HRRY_TEST_RUST_HOOK=1. Commit before running (rev is HEAD).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/precommit-test"
venv="$out/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import pre_commit" 2>/dev/null \
    || "$venv/bin/pip" install --quiet --disable-pip-version-check "pre-commit==4.7.0"
cargo build --release --quiet --bin hrry
rev=$(git rev-parse HEAD)
repo="$out/repo"
rm -rf "$repo"
mkdir -p "$repo"
export PRE_COMMIT_HOME="$out/cache"
export PATH="$venv/bin:$target/release:$PATH"
cd "$repo"
git init --quiet
git config user.email ci@example.invalid
git config user.name ci
git config commit.gpgsign false

hook="hrry-validate-system"
if [ "${HRRY_TEST_RUST_HOOK:-0}" = 1 ]; then
    hook="hrry-validate"
fi
configure() {
    cat >.pre-commit-config.yaml <<YAML
repos:
  - repo: $root
    rev: $rev
    hooks:
      - id: $hook
$1
YAML
    git add .pre-commit-config.yaml
}
# Commits what is staged; the hook's output goes to $out/commit.log.
commit() {
    git commit --quiet -m "$1" >"$out/commit.log" 2>&1
}
fail() {
    echo "pre-commit test: $*" >&2
    cat "$out/commit.log" >&2
    exit 1
}

configure ""
pre-commit install >/dev/null
cp "$root/corpus/valid/basic.hrry" model.hrry
cp "$root/corpus/stream/valid/basic.hrrys" model.hrrys
git add model.hrry model.hrrys
commit "valid files" || fail "valid files were refused"
grep -q "Passed" "$out/commit.log" || fail "the hook did not run on valid files"
echo "valid .hrry and .hrrys: committed"

cp "$root/corpus/invalid/HF-CRC-001.hrry" broken.hrry
git add broken.hrry
commit "an invalid file" && fail "an invalid HRRYFILE was committed"
grep -q "HF-CRC-001" "$out/commit.log" || fail "the refusal does not name HF-CRC-001"
git rm --quiet --cached broken.hrry
rm broken.hrry
echo "invalid .hrry: refused, HF-CRC-001 named"

cp "$root/corpus/stream/invalid/HF-CMP-002.hrrys" broken.hrrys
git add broken.hrrys
commit "an invalid stream" && fail "an invalid stream was committed"
grep -q "HF-CMP-002" "$out/commit.log" || fail "the refusal does not name HF-CMP-002"
git rm --quiet --cached broken.hrrys
rm broken.hrrys
echo "invalid .hrrys: refused, HF-CMP-002 named"

# A private device tag is a hardening finding: refused by default, accepted when
# the hook's args ask for the spec's rules alone.
cp "$root/corpus/invalid/TD-BUF-012.hrry" private.hrry
git add private.hrry
commit "a hardening finding" && fail "a hardening finding was committed"
grep -q "TD-BUF-012" "$out/commit.log" || fail "the refusal does not name TD-BUF-012"
configure "        args: [--permissive]"
commit "a hardening finding, permissive" || fail "args: [--permissive] did not reach hrry"
echo "args: [--permissive] reaches hrry validate"
echo "pre-commit hook $hook: every check passed"
