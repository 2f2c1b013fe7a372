"""The results format: one ``results.parquet`` (a row per fold × rep), one ``trace.parquet``
(iteration-level) and one ``run.json`` per job, written atomically (temp file + rename).

A job that raised leaves ``error.json`` instead (exception type, one-line message, time, traceback);
the next attempt of that job removes it. ``dpbench-status`` reads both (:mod:`dpbench.status`).

Every results row carries the method's hyper-parameters twice: as the JSON ``params`` and as one flat
column ``p_<name>`` each (:func:`param_columns`); every trace row carries the identity of its job
(:func:`dpbench.jobs.columns.trace_identity`), so the traces of many jobs concatenate without colliding. :func:`load` reads
the files of one job, a sweep or a whole tree into one frame. pandas and pyarrow are imported by
the functions that read or write tables, so that writing ``error.json`` or ``run.json`` needs neither."""

from __future__ import annotations

import json
import logging
import os
import platform
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpbench.errors import DpbenchError, caused_by_ctrl_c
from dpbench.permissions import apply_umask
from dpbench.schema import column_classes

if TYPE_CHECKING:
    import pandas as pd

RESULTS_FILE = "results.parquet"
TRACE_FILE = "trace.parquet"
RUN_FILE = "run.json"
ERROR_FILE = "error.json"
CLASS_KEY = b"dpbench.class"  # parquet field metadata: the column's privacy class (dpbench.schema)

log = logging.getLogger("dpbench")

#: The columns a results file must have to count as finished (every job kind writes more:
#: :data:`dpbench.jobs.columns.CORE_COLUMNS`).
RESULT_COLUMNS = (
    "paper",
    "algorithm",
    "dataset",
    "model",
    "eps",
    "delta",
    "eps_spent",
    "fold",
    "rep",
    "seed",
    "test_accuracy",
    "train_objective",
    "test_objective",
    "suboptimality",
    "n_iterations",
    "grad_evals",
    "obj_evals",
    "wall_time_s",
    "config_hash",
    "dpbench_version",
)
TRACE_COLUMNS = ("fold", "rep", "iteration", "train_objective", "step_size", "eps_spent")
PARAM_PREFIX = "p_"  # results column p_<name>: the method's hyper-parameter <name>
TABLE_FILES = {"results": RESULTS_FILE, "trace": TRACE_FILE}


def param_columns(params: Mapping[str, Any]) -> dict[str, Any]:
    """One results column per hyper-parameter, ``p_<name>``: scalars and None as they are, lists and
    dicts as JSON (sorted keys), so that runs differing in one hyper-parameter differ in one column."""
    return {f"{PARAM_PREFIX}{name}": _flat(value) for name, value in params.items()}


def _flat(value: Any) -> Any:
    return value if value is None or isinstance(value, (bool, int, float, str)) else json.dumps(value, sort_keys=True)


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        apply_umask(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_parquet(df: pd.DataFrame, path: Path, table: str) -> None:
    """Write ``df`` to ``path`` atomically: readers see the old file or the whole new one.

    ``table`` (``results`` or ``trace``) stores each column's privacy class (:mod:`dpbench.schema`) as
    field metadata ``dpbench.class``; an unclassified column is refused before anything is written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    classes = column_classes(table, df.columns)
    arrow = pa.Table.from_pandas(df, preserve_index=False)
    fields = [f.with_metadata({**(f.metadata or {}), CLASS_KEY: classes[f.name].encode()}) for f in arrow.schema]
    arrow = arrow.cast(pa.schema(fields, metadata=arrow.schema.metadata))
    _atomic_write(path, lambda tmp: pq.write_table(arrow, tmp))


def read_column_classes(path: Path) -> dict[str, str]:
    """``{column: privacy class}`` as stored in a results or trace file (columns without one are left out)."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    return {f.name: f.metadata[CLASS_KEY].decode() for f in schema if f.metadata and CLASS_KEY in f.metadata}


def write_json(obj: Any, path: Path) -> None:
    """Write ``obj`` as indented JSON atomically."""

    def write(tmp: str) -> None:
        with open(tmp, "w") as fh:
            json.dump(obj, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")

    _atomic_write(path, write)


def read_finished(path: Path) -> pd.DataFrame | None:
    """The results in ``path`` if it is a complete, readable results file; None otherwise."""
    import pandas as pd

    if not path.is_file():
        return None
    try:
        df = pd.read_parquet(path)
    except Exception:  # noqa: BLE001 — truncated or corrupt parquet (pyarrow raises many types): the job must run again
        return None
    return df if set(RESULT_COLUMNS) <= set(df.columns) else None


def read_finished_columns(path: Path, columns: Sequence[str]) -> tuple[int, dict[str, list | None]] | None:
    """(row count, ``{column: its values}``, None for a column the file lacks) of ``path`` if it is a complete,
    readable results file (:func:`read_finished`'s test: every column read and decoded); None otherwise. Without
    pandas' conversion: a third of the time, for a status over hundreds of jobs."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path) if path.is_file() else None
    except Exception:  # noqa: BLE001 — truncated or corrupt parquet (pyarrow raises many types): the job must run again
        table = None
    if table is None or not set(RESULT_COLUMNS) <= set(table.column_names):
        return None
    return table.num_rows, {c: table.column(c).to_pylist() if c in table.column_names else None for c in columns}


def one_line(exc: BaseException) -> str:
    """``exc``'s message cut to its first non-empty line (its type name when it has none)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def write_error_marker(out_dir: Path, exc: BaseException) -> Path:
    """Record in ``out_dir/error.json`` (atomically) that the job failed with ``exc``; returns the path."""
    path = Path(out_dir) / ERROR_FILE
    marker = {
        "type": type(exc).__name__,
        "message": one_line(exc),
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "pid": os.getpid(),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }
    write_json(marker, path)
    return path


def record_failure(out_dir: Path, exc: BaseException) -> None:
    """:func:`write_error_marker`, logging instead of raising when the marker cannot be written, so
    that the caller can re-raise ``exc`` itself. An exception that Ctrl-C caused
    (:func:`~dpbench.errors.caused_by_ctrl_c`) is no failure: nothing is recorded."""
    if caused_by_ctrl_c(exc):
        return
    try:
        write_error_marker(out_dir, exc)
    except OSError as marker_exc:
        log.warning("cannot record the failure in %s: %s", out_dir, marker_exc)


def read_error_marker(out_dir: Path) -> dict[str, Any] | None:
    """The failure recorded in ``out_dir/error.json``, or None when there is none. An unreadable
    marker still means the job failed: its message then says so."""
    path = Path(out_dir) / ERROR_FILE
    if not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text())
        if not isinstance(marker, dict):
            raise ValueError("not a JSON object")  # noqa: TRY004 — handled below with the JSON decoding errors
    except (OSError, ValueError) as exc:
        return {"type": "UnreadableMarker", "message": f"{path} is unreadable: {one_line(exc)}"}
    return marker


def clear_error_marker(out_dir: Path) -> None:
    """Remove ``out_dir/error.json`` if present (a new attempt of the job supersedes it)."""
    (Path(out_dir) / ERROR_FILE).unlink(missing_ok=True)


# -------------------------------------------------------------------------------- loading
def load(path: str | Path, table: str = "results") -> pd.DataFrame:
    """Every ``results.parquet`` (or ``trace.parquet``, ``table="trace"``) under ``path`` — one job's
    directory, a sweep directory or any tree of them; a parquet file is read as it is — as one frame,
    with ``job_dir``, the job's directory relative to ``path`` ("." for ``path`` itself).

    Each file is read on its own, so ``key=value`` directory names are never taken for hive partitions.
    Results written before the ``p_<name>`` columns get them from ``params``. Raises DpbenchError when
    ``path`` does not exist, holds no such file, or holds one that is not readable parquet."""
    import pandas as pd

    if table not in TABLE_FILES:
        raise ValueError(f"table must be one of {', '.join(TABLE_FILES)}, got {table!r}")
    path = Path(path)
    if not path.exists():
        raise DpbenchError(f"no such file or directory: {path}")
    root, files = (path.parent, [path]) if path.is_file() else (path, sorted(path.rglob(TABLE_FILES[table])))
    if not files:
        raise DpbenchError(f"no {TABLE_FILES[table]} found under {path}")
    frames = [_read_table(file).assign(job_dir=file.parent.relative_to(root).as_posix()) for file in files]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return with_param_columns(frame) if table == "results" else frame


def _read_table(file: Path) -> pd.DataFrame:
    """One parquet file as a frame, read without any partition discovery; DpbenchError when unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(file).read().to_pandas()
    except (OSError, pa.ArrowException) as exc:
        raise DpbenchError(
            f"{file} is not a readable parquet file ({one_line(exc)}); rerun its job or remove it"
        ) from None


def with_param_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the ``p_<name>`` columns its ``params`` imply but it lacks (results written before
    they existed); values of columns already present are kept."""
    import pandas as pd

    if "params" not in df.columns or df.empty:
        return df
    parsed = {text: param_columns(json.loads(text)) for text in df["params"].dropna().unique()}
    derived = pd.DataFrame([parsed.get(text, {}) for text in df["params"]], index=df.index)
    missing = [c for c in derived.columns if c not in df.columns]
    return pd.concat([df, derived[missing]], axis=1) if missing else df
