"""``dpbench-publish DIR --out DIR2``: the publishable view of results, by construction.

A job writes its private releases next to measurements taken for the benchmark (test accuracy,
objectives, timings, counts that follow private randomness: :mod:`dpbench.schema`). Only ``public``
and ``release`` columns are covered by a run's (ε, δ); this command writes, for every job under DIR,
a ``results.parquet``, ``trace.parquet`` and ``run.json`` that hold nothing else:

* **rows**: a row is published when its guarantee holds — a private method, ``guarantee_valid``, and
  noise from a secret key (``noise_key=secret``: rows whose noise replays from the public seed, or
  that predate the key, are not). Every other row is left out and counted by reason;
* **columns**: the ``public`` and ``release`` columns of the schema of this dpbench (not the classes
  stored in an older file); an unclassified column stops the command before anything is written;
* **trace**: the trace rows of the published runs, ``public`` and ``release`` columns;
* **run.json**: the configuration, code identity, software versions, the dataset's declared facts
  (name, checksum of its published files, encoding, declared bounds — never its row counts) and the
  ledgers (the events each run paid for) — nothing read off the data outside a release, and not the
  location or fingerprint of the noise key. The noise key itself is never copied.

What is written is read back and checked (:func:`check_publishable`), so a file that would publish a
``measurement`` column fails the command. ``dpbench-report --publishable`` builds its page on this view.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpbench.console import console_command
from dpbench.errors import DpbenchError
from dpbench.results import (
    RESULTS_FILE,
    RUN_FILE,
    TRACE_FILE,
    read_column_classes,
    write_json,
    write_parquet,
)
from dpbench.schema import MEASUREMENT, PUBLIC, RELEASE, column_classes

if TYPE_CHECKING:
    import pandas as pd

PUBLISHABLE = (PUBLIC, RELEASE)

#: run.json's top-level keys that are public (configuration, code and software).
RUN_KEYS = ("config", "config_hash", "code", "dpbench_version", "packages", "python")
#: The dataset facts of run.json that are declared, not read off the private rows.
DATASET_KEYS = (
    "name",
    "checksum",
    "options",
    "encoding",
    "dim",
    "dtype",
    "scaling",
    "sparse",
    "feature_bound",
    "row_norm_bound",
    "row_l1_bound",
)
#: A ledger's keys in run.json: the budget, the accountant and the events paid for.
LEDGER_KEYS = (
    "fold",
    "rep",
    "block",
    "runs",
    "accountant",
    "conversion",
    "delta",
    "epsilon",
    "eps_spent",
    "events",
    "counts",
    "n_charges",
    "neighbouring",
    "orders",
    "gaussian_amplification",
    "tuning",
    "count",
)
#: Private tuning's public plan (K's law, the order, the score's noise); never K or the held-out count.
TUNING_KEYS = (
    "order",
    "trial_rdp",
    "score_rdp",
    "score_noise_multiplier",
    "trials_mean",
    "trials_shape",
    "validation_fraction",
)


@dataclass
class Publication:
    """What :func:`publish` wrote: jobs and rows published, and the rows left out by reason."""

    jobs: int = 0
    rows: int = 0
    left_out: Counter = field(default_factory=Counter)

    def line(self, out: Path) -> str:
        left = "; ".join(f"{count} row(s) {reason}" for reason, count in sorted(self.left_out.items()))
        return f"{self.rows} row(s) of {self.jobs} job(s) → {out}" + (f"; left out: {left}" if left else "")


def unpublishable_reasons(results: pd.DataFrame) -> pd.Series:
    """Per row, why it may not be published ('' when it may): not private, guarantee not valid, or
    noise that is not from a secret key."""
    import numpy as np
    import pandas as pd

    private = results["private"].astype(bool) if "private" in results else pd.Series(False, index=results.index)
    valid = (
        results["guarantee_valid"].astype(bool)
        if "guarantee_valid" in results
        else pd.Series(False, index=results.index)
    )
    noise = results["noise_key"] if "noise_key" in results else pd.Series("seed", index=results.index)
    return pd.Series(
        np.select(
            [~private, ~valid, noise != "secret"],
            ["not private", "guarantee_valid=false", "with noise replayable from the seed (noise_key≠secret)"],
            default="",
        ),
        index=results.index,
    )


def publishable_columns(table: str, columns) -> list[str]:
    """The ``public`` and ``release`` columns among ``columns`` (raises on an unclassified one)."""
    classes = column_classes(table, columns)
    return [c for c in columns if classes[c] in PUBLISHABLE]


def publishable_run(meta: dict[str, Any]) -> dict[str, Any]:
    """run.json cut to its public part (module docstring)."""
    run = {key: meta[key] for key in RUN_KEYS if key in meta}
    dataset = meta.get("dataset") or {}
    run["dataset"] = {key: dataset[key] for key in DATASET_KEYS if key in dataset}
    if "files" in dataset:
        run["dataset"]["files"] = [{k: f[k] for k in ("name", "sha256") if k in f} for f in dataset["files"]]
    run["ledgers"] = [_publishable_ledger(ledger) for ledger in meta.get("ledgers", [])]
    return run


def _publishable_ledger(ledger: dict[str, Any]) -> dict[str, Any]:
    kept = {key: ledger[key] for key in LEDGER_KEYS if key in ledger}
    if "tuning" in kept:
        kept["tuning"] = {key: kept["tuning"][key] for key in TUNING_KEYS if key in kept["tuning"]}
    return kept


def publish(source: Path, out: Path) -> Publication:
    """Write the publishable view of every job under ``source`` into ``out`` (same relative layout)."""
    import pandas as pd

    source, out = Path(source), Path(out)
    if not source.is_dir():
        raise DpbenchError(f"{source}: not a directory")
    if out.resolve() == source.resolve() or source.resolve() in out.resolve().parents:
        raise DpbenchError(f"--out {out} lies inside {source}: write the publishable view elsewhere")
    if out.exists() and any(out.iterdir()):
        raise DpbenchError(f"--out {out} exists and is not empty: choose a new directory")
    files = sorted(source.rglob(RESULTS_FILE))
    if not files:
        raise DpbenchError(f"no {RESULTS_FILE} found under {source}")
    publication = Publication()
    for results_path in files:
        job = results_path.parent
        results = pd.read_parquet(results_path)
        reasons = unpublishable_reasons(results)
        publication.left_out.update(r for r in reasons if r)
        kept = results[reasons == ""]
        if kept.empty:
            continue
        target = out / job.relative_to(source)
        write_parquet(kept[publishable_columns("results", kept.columns)], target / RESULTS_FILE, table="results")
        _publish_trace(job, target, kept)
        meta = json.loads((job / RUN_FILE).read_text()) if (job / RUN_FILE).is_file() else {}
        write_json(publishable_run(meta), target / RUN_FILE)
        check_publishable(target)
        publication.jobs += 1
        publication.rows += len(kept)
    return publication


def _publish_trace(job: Path, target: Path, kept: pd.DataFrame) -> None:
    import pandas as pd

    if not (job / TRACE_FILE).is_file():
        return
    trace = pd.read_parquet(job / TRACE_FILE)
    runs = set(zip(kept["fold"], kept["rep"]))
    if "fold" in trace and "rep" in trace:
        trace = trace[[(f, r) in runs for f, r in zip(trace["fold"], trace["rep"])]]
    write_parquet(trace[publishable_columns("trace", trace.columns)], target / TRACE_FILE, table="trace")


def check_publishable(job: Path) -> None:
    """Raise DpbenchError when a file written into ``job`` holds a column that is not ``public`` or
    ``release``, by the stored class or by this dpbench's schema."""
    for table, name in (("results", RESULTS_FILE), ("trace", TRACE_FILE)):
        path = job / name
        if not path.is_file():
            continue
        stored = read_column_classes(path)
        current = column_classes(table, stored)
        bad = sorted(c for c in stored if stored[c] not in PUBLISHABLE or current[c] not in PUBLISHABLE)
        if bad:
            raise DpbenchError(
                f"{path}: {MEASUREMENT} column(s) {', '.join(bad)} in a publishable file (a bug in dpbench)"
            )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpbench-publish",
        description="Write the publishable view of results: only rows whose guarantee holds, only public and release "
        "columns, run.json without data-derived facts; nothing that replays the noise.",
    )
    parser.add_argument("source", type=Path, help="a sweep directory, a job directory or any tree of them")
    parser.add_argument("--out", type=Path, required=True, help="a new (or empty) directory for the publishable files")
    return parser


@console_command("dpbench-publish")
def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dpbench-publish`` console script."""
    args = build_parser().parse_args(argv)
    try:
        publication = publish(args.source, args.out)
    except DpbenchError as exc:
        print(f"dpbench-publish: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dpbench-publish: error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if publication.rows == 0:
        print(
            f"dpbench-publish: error: nothing is publishable under {args.source}; {publication.line(args.out)}",
            file=sys.stderr,
        )
        return 1
    print(f"dpbench-publish: {publication.line(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
