"""``dpbench-verify --rerun K``: run K jobs again from what run.json recorded and compare bit for bit.

run.json's ``config`` is the job's resolved configuration; :func:`~dpbench.resolve.run_config`
validates it again, and its ``config_hash`` must be the recorded one (else the configuration on disk
does not describe the job). The job is run by :func:`dpbench.engine.run_job` into a temporary
directory, with a fresh cache there too (so F* and every other cached value is recomputed), and every
results column except the timing ones (:data:`TIMING_COLUMNS`) must equal the file's bit for bit
(floats by their bits, NaN equal to NaN). Nothing is written into the verified directory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpbench.privacy.noise_key import KEY_FILE
from dpbench.results import RESULTS_FILE, RUN_FILE

#: Results columns that measure time and differ from run to run.
TIMING_COLUMNS = frozenset({"wall_time_s"})


def sample_jobs(results_paths: Sequence[Path], k: int, seed: int) -> list[Path]:
    """A seeded sample of ``k`` of the jobs (all of them when ``k`` ≥ their number), in their order."""
    if k >= len(results_paths):
        return list(results_paths)
    chosen = set(random.Random(seed).sample(range(len(results_paths)), k))
    return [p for i, p in enumerate(results_paths) if i in chosen]


def is_timing(column: str) -> bool:
    return column in TIMING_COLUMNS or column.endswith(("_seconds", "_time_s"))


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise "the same value": float bits equal or both NaN; otherwise ==, with None/NaN alike."""
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return (a64.view(np.int64) == b64.view(np.int64)) | (np.isnan(a64) & np.isnan(b64))
    out = np.empty(len(a), dtype=bool)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        out[i] = (_missing(x) and _missing(y)) or (
            not _missing(x) and not _missing(y) and type(x) is type(y) and x == y
        )
    return out


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (so that messages read 0.77, not np.float64(0.77))."""
    return value.item() if isinstance(value, np.generic) else value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def first_difference(stored, rerun) -> str | None:
    """The first column (in the stored file's order) and row where two results frames differ, ignoring
    timing columns; None when they are the same."""
    if len(stored) != len(rerun):
        return f"the rerun has {len(rerun)} rows, {RESULTS_FILE} has {len(stored)}"
    columns = [c for c in stored.columns if not is_timing(c)]
    extra = [c for c in rerun.columns if c not in stored.columns and not is_timing(c)]
    absent = [c for c in columns if c not in rerun.columns]
    if absent or extra:
        return f"columns differ: {', '.join(absent)} only in {RESULTS_FILE}; {', '.join(extra)} only in the rerun"
    for column in columns:
        a, b = stored[column].to_numpy(), rerun[column].to_numpy()
        if a.dtype != b.dtype:
            return f"column {column}: dtype {a.dtype} in {RESULTS_FILE}, {b.dtype} in the rerun"
        same = _same(a, b)
        if not same.all():
            i = int(np.argmin(same))
            where = (
                f"fold {stored['fold'].iloc[i]} rep {stored['rep'].iloc[i]}"
                if {"fold", "rep"} <= set(stored.columns)
                else f"row {i}"
            )
            return f"{where}: {column} {_plain(a[i])!r} in {RESULTS_FILE}, {_plain(b[i])!r} in the rerun"
    return None


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def recorded_config(meta: dict[str, Any], data_dir: Path):
    """The RunConfig of run.json's ``config`` (forced, quiet; dataset files looked up in the recorded
    ``data_dir`` when it exists, else in ``data_dir``)."""
    from omegaconf import OmegaConf

    from dpbench.resolve import run_config
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    cfg = run_config(OmegaConf.create(meta["config"]))
    recorded = Path(str(meta["config"].get("data_dir") or ""))
    return dataclasses.replace(cfg, force=True, progress=False, data_dir=recorded if recorded.is_dir() else data_dir)


def rerun_job(job_dir: Path, work_dir: Path) -> str | None:
    """Run the job in ``job_dir`` again in ``work_dir`` (a fresh temporary directory) and compare; None
    when the rerun reproduces results.parquet, else the first difference (or why it could not rerun)."""
    import pandas as pd

    from dpbench.conf_files import default_cache_dir
    from dpbench.engine import run_job
    from dpbench.jobs.plan import make_plan
    from dpbench.results import one_line

    meta = json.loads((job_dir / RUN_FILE).read_text())
    data_dir = Path(os.environ.get("DPBENCH_DATA") or default_cache_dir() / "data")
    try:
        cfg = recorded_config(meta, data_dir)
    except Exception as exc:  # noqa: BLE001 — a config the current code refuses is the finding, not a crash
        return f"the configuration in {RUN_FILE} is refused: {one_line(exc)}"
    if cfg.config_hash != meta.get("config_hash"):
        return f"the configuration in {RUN_FILE} hashes to {cfg.config_hash}, not its config_hash {meta.get('config_hash')}"
    out = work_dir / "job"
    noise = meta.get("noise", {"key": "seed"})  # a job from before the key existed drew its noise from the seed
    key_dir = None
    if noise.get("key") == "secret":
        key_dir = (job_dir / noise["key_file"]).parent
        if not (key_dir / KEY_FILE).is_file():
            return f"its secret noise key {key_dir / KEY_FILE} is missing: the job's noise cannot be replayed"
    elif noise.get("key") == "seed" and cfg.privacy.noise_key != "seed":  # recorded before privacy.noise_key existed
        cfg = dataclasses.replace(cfg, privacy=dataclasses.replace(cfg.privacy, noise_key="seed"))
    with _environment(DPBENCH_CACHE=str(work_dir / "cache")):
        try:
            run_job(make_plan(cfg), out, resolved_config=meta["config"], key_dir=key_dir)
        except Exception as exc:  # noqa: BLE001 — the job failing now is the finding
            return f"the rerun failed: {type(exc).__name__}: {one_line(exc)}"
    return first_difference(pd.read_parquet(job_dir / RESULTS_FILE), pd.read_parquet(out / RESULTS_FILE))
