"""The conformance corpus through the Python package: every valid file opens and
every tensor equals what `hrry export` writes (and quantized ones what `hrry dequant`
writes); every invalid file raises InvalidFileError naming the manifest's rule, and
`validate` reports it."""

import json
import os

import numpy as np
import pytest

import hrry
from conftest import corpus_path, entry_ids, manifest_entries, run_hrry

ENTRIES = manifest_entries()
VALID_HRRY = [e for e in ENTRIES if e["valid"] and e["format"] == "hrryfile"]
INVALID_HRRY = [e for e in ENTRIES if not e["valid"] and e["format"] == "hrryfile"]
VALID_HOLO = [e for e in ENTRIES if e["valid"] and e["format"] == "holo"]
INVALID_HOLO = [e for e in ENTRIES if not e["valid"] and e["format"] == "holo"]


def test_corpus_is_not_empty():
    assert len(VALID_HRRY) > 20 and len(INVALID_HRRY) > 100
    assert VALID_HOLO and INVALID_HOLO


def same_array(got, want):
    """Equal dtype, shape and bytes (so NaN payloads and -0.0 count)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("entry", VALID_HRRY, ids=entry_ids(VALID_HRRY))
def test_valid_file_matches_export(entry, hrry_bin, tmp_path):
    path = corpus_path(entry)
    report = hrry.validate(path)
    assert report.valid and report.format == "hrryfile" and report.mode == "strict"
    with hrry.open(path) as f:
        names = f.keys()
        assert len(f) == len(names) and list(f) == names
        for name in names:
            assert name in f
            info = f.info(name)
            out = tmp_path / "t.npy"
            done = run_hrry("export", path, name, "-o", str(out))
            if done.returncode != 0:
                # What the CLI cannot export, the package refuses too.
                with pytest.raises(hrry.HrryError):
                    f.get_tensor(name)
                continue
            want = np.load(out)
            got = f.get_tensor(name)
            same_array(got, want)
            assert got.shape == info["shape"]
            if info["quantization"] is not None:
                dq = tmp_path / "dq.npy"
                done = run_hrry("dequant", path, name, "-o", str(dq))
                assert done.returncode == 0, done.stderr
                same_array(f.dequantize(name), np.load(dq))


RULES = {r.id: r for r in hrry.rules()}


@pytest.mark.parametrize("entry", INVALID_HRRY, ids=entry_ids(INVALID_HRRY))
def test_invalid_file_raises_with_a_rule_validate_reports(entry):
    path = corpus_path(entry)
    report = hrry.validate(path)
    assert not report.valid and report.format == "hrryfile"
    assert entry["rule"] in report.rule_ids()
    # A full check refuses what validation rejects, naming the first rule broken.
    with pytest.raises(hrry.InvalidFileError) as caught:
        hrry.open(path, check="full")
    assert [v.rule for v in caught.value.violations] == report.rule_ids()[:1]
    assert isinstance(caught.value, hrry.HrryError) and isinstance(caught.value, ValueError)
    # The default check refuses every file that breaks a rule on metadata.
    if RULES[entry["rule"]].reads == "metadata":
        with pytest.raises(hrry.InvalidFileError) as caught:
            hrry.open(path)
        assert caught.value.violations[0].rule in report.rule_ids()
        with pytest.raises(hrry.InvalidFileError):
            hrry.load_file(path)
    with open(path, "rb") as f:
        from_bytes = hrry.validate(f.read())
    assert [str(v) for v in from_bytes.violations] == [str(v) for v in report.violations]


def test_the_default_check_opens_files_that_break_only_data_rules():
    data_only = []
    for entry in INVALID_HRRY:
        report = hrry.validate(corpus_path(entry))
        if all(RULES[r].reads == "data" for r in report.rule_ids()):
            data_only.append(entry)
            with hrry.open(corpus_path(entry)) as f:
                f.keys()
    assert data_only
    with pytest.raises(ValueError, match="check must be"):
        hrry.open(corpus_path(data_only[0]), check="none")


@pytest.mark.parametrize("entry", VALID_HOLO, ids=entry_ids(VALID_HOLO))
def test_valid_holo_opens(entry):
    path = corpus_path(entry)
    report = hrry.validate(path)
    assert report.valid and report.format == "holo"
    data = open(path, "rb").read()
    with hrry.holo.open(path) as archive:
        assert archive.format_version in (2, 3)
        assert archive.fingerprint == data[-32:]
        for section in archive.sections:
            view = section.data
            assert isinstance(view, memoryview) and view.readonly
            assert bytes(view) == data[section.offset : section.offset + section.length]
            assert len(view) == section.length
        for fingerprint, body in archive.weights.items():
            assert body.readonly and len(fingerprint) == 64
        for key, body in archive.extensions.items():
            assert isinstance(key, str) and body.readonly
        kept = [(s.offset, s.data) for s in archive.sections]
    assert archive.closed
    with pytest.raises(ValueError):
        archive.sections
    # Views outlive the archive: they keep the mapping alive.
    for offset, view in kept:
        assert bytes(view) == data[offset : offset + len(view)]


@pytest.mark.parametrize("entry", INVALID_HOLO, ids=entry_ids(INVALID_HOLO))
def test_invalid_holo_raises_with_rule(entry):
    path = corpus_path(entry)
    with pytest.raises(hrry.InvalidFileError) as caught:
        hrry.holo.open(path)
    assert entry["rule"] in [v.rule for v in caught.value.violations]
    report = hrry.validate(path)
    assert not report.valid and report.format == "holo"
    assert entry["rule"] in report.rule_ids()


def test_rules_table_covers_the_corpus():
    table = {r.id: r for r in hrry.rules()}
    for entry in INVALID_HRRY + INVALID_HOLO:
        rule = table[entry["rule"]]
        assert rule.level in ("spec", "hardening", "limit")
        assert rule.summary and rule.spec
    done = run_hrry("rules", "--json")
    if done.returncode == 0:
        import json

        assert [r["id"] for r in json.loads(done.stdout)["rules"]] == list(table)


def test_permissive_open_accepts_hardening_only_violations():
    hardening = {r.id for r in hrry.rules() if r.level == "hardening"}
    entries = [e for e in INVALID_HRRY if e["rule"] in hardening]
    assert entries
    opened = 0
    for entry in entries:
        path = corpus_path(entry)
        report = hrry.validate(path, permissive=True)
        assert report.mode == "permissive"
        assert entry["rule"] not in report.rule_ids()
        if report.valid:
            with hrry.open(path, permissive=True) as f:
                f.keys()
            opened += 1
    assert opened > 0


def test_the_policy_tells_invalid_from_refused():
    worked = corpus_path(
        next(e for e in ENTRIES if e["path"].endswith("TD-BUF-014-metadata-worked-example.hrry"))
    )
    spec = hrry.validate(worked, policy="spec")
    assert spec.valid and spec.verdict == "valid" and spec.policy == "spec"
    hardened = hrry.validate(worked)
    assert hardened.verdict == "refused" and hardened.policy == "hardened"
    assert hardened.rule_ids() == ["TD-BUF-014"]
    with pytest.raises(hrry.InvalidFileError, match="hardening policy"):
        hrry.open(worked)
    with hrry.open(worked, policy="spec") as f:
        assert f.keys() == ["worked_example"]
    with pytest.raises(ValueError):
        hrry.validate(worked, policy="lenient")
    broken = corpus_path(next(e for e in ENTRIES if e["path"] == "invalid/HF-CRC-001.hrry"))
    assert hrry.validate(broken, policy="spec").verdict == "invalid"


def test_missing_path_is_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        hrry.open(tmp_path / "nope.hrry")
    with pytest.raises(FileNotFoundError):
        hrry.validate(str(tmp_path / "nope.hrry"))
    with pytest.raises(FileNotFoundError):
        hrry.holo.open(os.fspath(tmp_path / "nope.holo"))
    with pytest.raises(TypeError):
        hrry.validate(42)


def test_info_quantization_fields_match_inspect_json(hrry_bin):
    # Every field File.info reports for a quantized tensor has the value
    # `hrry inspect --json` prints for it (absent zero points as None, JSON's null).
    compared = 0
    for entry in VALID_HRRY:
        path = corpus_path(entry)
        done = run_hrry("inspect", "--json", path)
        assert done.returncode == 0, done.stderr
        by_name = {t["name"]: t for t in json.loads(done.stdout)["tensors"]}
        with hrry.open(path) as f:
            for name in f.keys():
                quant = f.info(name)["quantization"]
                if quant is None:
                    continue
                want = by_name[name]["quantization"]
                for key, value in quant.items():
                    if key in want:
                        assert value == want[key], (entry["path"], name, key)
                        compared += 1
                if "zero_point_buffer_index" in quant:
                    assert (quant["zero_point_buffer_index"] is None) == quant["symmetric"]
    assert compared > 50
