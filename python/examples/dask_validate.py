"""Validate a bucket's worth of HRRYFILEs and .holo archives on a Dask cluster and
collect the reports into one table.

    python dask_validate.py s3://models/a.hrry https://example.com/b.hrry ...
    python dask_validate.py --from urls.txt --jsonl reports.jsonl   # one per line, - for stdin
    python dask_validate.py --scheduler tcp://10.0.0.5:8786 --from urls.txt

Each file is validated by `hrry.validate` on a worker, which reads only what the
rules need (for a URL: a few range requests, never the tensor data) and ships the
`hrry.Report` back (reports pickle). S3 URLs are signed on the workers with the
standard AWS_* environment variables (AWS_ENDPOINT_URL for S3-compatible stores):
set them where the workers run. Without --scheduler the script starts a
LocalCluster of worker processes on this machine.

The table has one row per file, in the order given: `file`, `valid`, `format`,
`violations` (how many), `rules` (the IDs broken) and `error` (why a file could not
be read: missing, refused, changed while being read). It is printed, or written as
JSON lines (each row with every field of `Report.to_dict()`) with --jsonl;
`pandas.DataFrame(validate_all(client, urls))` makes it a DataFrame. The exit status is 0 when every file is
valid, 1 when one is not, 2 when one could not be read (as `hrry validate`).

Listing the bucket is left to the tools that do it (`aws s3 ls --recursive`,
`s3fs.S3FileSystem().find(...)`, `huggingface_hub.list_repo_files`): give their
output as URLs, one per line.
"""

import argparse
import json
import sys

import hrry


def validate_one(url):
    """What a worker runs: the report, or the reason the file could not be read.

    A report travels back as itself (it pickles as plain data); a file that could
    not be read becomes a row like ``hrry validate --json``'s ``{"file", "valid":
    false, "error"}``."""
    try:
        return hrry.validate(url)
    except OSError as e:
        return {"file": url, "valid": False, "error": str(e)}


def row(result):
    """One table row of a worker's result."""
    if isinstance(result, hrry.Report):
        d = result.to_dict()
        d["rules"] = result.rule_ids()
        d["violations"] = len(d["violations"]) + d["suppressed"]
        d["error"] = None
        return d
    return {**result, "format": None, "violations": None, "rules": None}


def validate_all(client, urls):
    """Validates every URL on the cluster `client` talks to; returns the rows in
    the order of `urls`."""
    futures = client.map(validate_one, urls, pure=False)
    return [row(r) for r in client.gather(futures)]


def print_table(rows, out=sys.stdout):
    columns = ("valid", "format", "violations", "rules", "error")
    print("\t".join(("file",) + columns), file=out)
    for r in rows:
        cells = [r["file"]] + ["" if r[c] is None else str(r[c]) for c in columns]
        print("\t".join(cells), file=out)


def read_urls(args):
    urls = list(args.urls)
    for name in args.url_files:
        with (sys.stdin if name == "-" else open(name)) as f:
            urls.extend(line.strip() for line in f if line.strip())
    return urls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urls", nargs="*", help="URLs (or paths) to validate")
    parser.add_argument(
        "--from", dest="url_files", action="append", default=[], metavar="FILE",
        help="read URLs from FILE, one per line (- for standard input)",
    )
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    parser.add_argument(
        "--workers", type=int, default=2, help="worker processes of the LocalCluster (2)"
    )
    parser.add_argument("--jsonl", metavar="FILE", help="write the rows as JSON lines")
    args = parser.parse_args(argv)
    urls = read_urls(args)
    if not urls:
        parser.error("no URLs given")

    from dask.distributed import Client, LocalCluster

    cluster = None
    if not args.scheduler:
        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True,
            dashboard_address=None,
        )
    try:
        with Client(args.scheduler or cluster) as client:
            rows = validate_all(client, urls)
    finally:
        if cluster is not None:
            cluster.close()
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    else:
        print_table(rows)
    if any(r["error"] for r in rows):
        return 2
    return 0 if all(r["valid"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
