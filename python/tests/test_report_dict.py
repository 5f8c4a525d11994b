"""Reports and violations as plain data: `to_dict()` gives what `hrry validate
--json` prints for the same file (same field names and values), and both pickle —
within the process and through another interpreter, as a cluster ships them."""

import json
import os
import pickle
import subprocess
import sys

import pytest

import hrry
from conftest import corpus_path, entry_ids, manifest_entries, run_hrry

ENTRIES = manifest_entries()
# Every format, valid and invalid files alike.
PICKED = [e for e in ENTRIES if not e["valid"]][::7] + [e for e in ENTRIES if e["valid"]]


def cli_file_object(path):
    done = run_hrry("validate", "--json", path)
    assert done.returncode in (0, 1, 3), done.stderr
    [file] = json.loads(done.stdout)["files"]
    return file


@pytest.mark.parametrize("entry", PICKED, ids=entry_ids(PICKED))
def test_to_dict_is_the_cli_json(entry, hrry_bin):
    path = corpus_path(entry)
    report = hrry.validate(path)
    d = report.to_dict()
    assert json.loads(json.dumps(d)) == d  # JSON types only
    cli = cli_file_object(path)
    for key in ("file", "valid", "mode", "violations", "notes"):
        assert d[key] == cli[key], key
    # The CLI prints null for bytes that are no HRRYFILE (no magic); the report
    # says what they were validated as.
    assert d["format"] == (cli["format"] or "hrryfile")
    assert d["suppressed"] == report.suppressed
    assert d["remote"] is None and "remote" not in cli  # a local file
    assert [v.to_dict() for v in report.violations] == d["violations"]


@pytest.mark.parametrize("entry", PICKED, ids=entry_ids(PICKED))
def test_pickle_round_trip(entry):
    report = hrry.validate(corpus_path(entry))
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(report, protocol=protocol))
        assert type(again) is hrry.Report
        assert again == report and again.to_dict() == report.to_dict()
        assert again.violations == report.violations
        assert again.rule_ids() == report.rule_ids()
    for v in report.violations:
        again = pickle.loads(pickle.dumps(v))
        assert type(again) is hrry.Violation and again == v and str(again) == str(v)


def test_bytes_report_has_no_file():
    with open(corpus_path(ENTRIES[0]), "rb") as f:
        report = hrry.validate(f.read())
    assert report.file is None and report.to_dict()["file"] is None
    assert pickle.loads(pickle.dumps(report)) == report


def test_reports_differ_by_value():
    invalid = [e for e in ENTRIES if not e["valid"] and e["format"] == "hrryfile"]
    a, b = (hrry.validate(corpus_path(e)) for e in invalid[:2])
    assert a != b and a == hrry.validate(corpus_path(invalid[0]))


CHILD = r"""
import json, pickle, sys
import hrry
reports = pickle.load(sys.stdin.buffer)
assert all(type(r) is hrry.Report for r in reports)
json.dump([r.to_dict() for r in reports], sys.stdout)
"""

CHILD_MAKES = r"""
import pickle, sys
import hrry
sys.stdout.buffer.write(pickle.dumps([hrry.validate(p) for p in sys.argv[1:]]))
"""


def test_pickles_cross_processes():
    paths = [corpus_path(e) for e in PICKED]
    reports = [hrry.validate(p) for p in paths]
    # This process's pickles, read by another interpreter.
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=pickle.dumps(reports),
        capture_output=True,
        check=True,
    )
    assert json.loads(done.stdout) == [r.to_dict() for r in reports]
    # Another interpreter's pickles, read here.
    done = subprocess.run(
        [sys.executable, "-c", CHILD_MAKES, *paths], capture_output=True, check=True
    )
    assert pickle.loads(done.stdout) == reports


def test_from_dict_checks_what_it_is_given():
    report = hrry.validate(corpus_path(next(e for e in ENTRIES if not e["valid"])))
    d = report.to_dict()
    assert hrry.Report.from_dict(d) == report
    for key, value, error in [
        ("valid", True, ValueError),  # violations but valid
        ("format", "zip", ValueError),
        ("mode", "lenient", ValueError),
        ("verdict", "maybe", ValueError),
        ("policy", "lenient", ValueError),
        ("notes", "not a list", TypeError),
        ("remote", {"requests": 1}, KeyError),
    ]:
        with pytest.raises(error):
            hrry.Report.from_dict({**d, key: value})
    with pytest.raises(KeyError):
        hrry.Report.from_dict({k: v for k, v in d.items() if k != "violations"})
    bad = dict(d["violations"][0], level="fatal")
    with pytest.raises(ValueError):
        hrry.Violation.from_dict(bad)
    with pytest.raises((TypeError, OverflowError)):
        hrry.Violation.from_dict(dict(d["violations"][0], offset=-1))
