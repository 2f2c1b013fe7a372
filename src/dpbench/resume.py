"""Resume inside a job: every finished fold × rep run of a GLM job is kept on disk until the job's
``results.parquet`` is written, so a job interrupted at run 20 of 50 (Ctrl-C, a lost node, a
pre-empted cluster slot) computes only the other 30 when it is started again.

Each run is stored in ``<job dir>/.runs/`` as ``fold{f}_rep{r}.json`` (the results row, in column
order, and the run's ledger summary) and ``fold{f}_rep{r}.trace.parquet``, written atomically
(:mod:`dpbench.results`), the JSON last. Runs are stored under the job's config hash and the
identity of the code that computed them (:mod:`dpbench.code_identity`): a stored run of another
configuration is never reused, nor one computed by other code unless ``resume=keep`` (its row then
keeps the identity it was computed by, and the job shows as stale). A fresh run is read back from its files too, so a resumed
job's results equal an uninterrupted job's bit for bit (floats round-trip exactly through JSON).
Seeds derive from (seed, fold, rep) alone (:mod:`dpbench.jobs.glm`), so a run computed in another
process is the run this one would compute.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpbench.results import write_json, write_parquet

if TYPE_CHECKING:
    import pandas as pd

RUNS_DIR = ".runs"

log = logging.getLogger("dpbench")


class RunStore:
    """The finished runs of the job in ``out_dir`` with config hash ``config_hash``, computed by code
    ``code`` (or by any code, when ``keep_other_code``)."""

    def __init__(self, out_dir: Path, config_hash: str, code: str, *, keep_other_code: bool = False):
        self.dir = Path(out_dir) / RUNS_DIR
        self.config_hash = config_hash
        self.code = code
        self.keep_other_code = keep_other_code

    def _paths(self, fold: int, rep: int) -> tuple[Path, Path]:
        stem = f"fold{fold}_rep{rep}"
        return self.dir / f"{stem}.json", self.dir / f"{stem}.trace.parquet"

    def load(self, fold: int, rep: int) -> tuple[dict[str, Any], pd.DataFrame, dict[str, Any]] | None:
        """(row, trace, ledger summary) of run (fold, rep) if it finished under this config, else None."""
        import pandas as pd

        record_path, trace_path = self._paths(fold, rep)
        try:
            record = json.loads(record_path.read_text())
            if record["config_hash"] != self.config_hash:
                return None
            if record["code"] != self.code and not self.keep_other_code:
                return None
            trace = pd.read_parquet(trace_path)
            return dict(record["row"]), trace, record["ledger"]
        except (OSError, ValueError, KeyError, TypeError):  # absent, partial or foreign: run it again
            return None

    def save(self, fold: int, rep: int, row: dict[str, Any], trace: pd.DataFrame, ledger: dict[str, Any]) -> None:
        """Store run (fold, rep); the record is written last, so its presence means the run is whole."""
        record_path, trace_path = self._paths(fold, rep)
        write_parquet(trace, trace_path, table="trace")
        record = {
            "config_hash": self.config_hash,
            "code": self.code,
            "row": [[k, _plain(v)] for k, v in row.items()],
            "ledger": ledger,
        }
        write_json(record, record_path)

    def run(self, fold: int, rep: int, compute) -> tuple[tuple[dict[str, Any], pd.DataFrame, dict[str, Any]], bool]:
        """(run (fold, rep) as stored, whether it was stored already): ``compute()`` → (row, trace,
        ledger summary) runs only when it was not, and its result is stored and read back."""
        stored = self.load(fold, rep)
        if stored is not None:
            return stored, True
        self.save(fold, rep, *compute())
        stored = self.load(fold, rep)
        if stored is None:
            raise OSError(f"cannot read back the run just stored in {self._paths(fold, rep)[0]}")
        return stored, False

    def clear(self) -> None:
        """Forget every stored run (the job's results are written, or ``force=true`` starts afresh)."""
        shutil.rmtree(self.dir, ignore_errors=True)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value JSON stores (np.float64 is a float already)."""
    return value.item() if isinstance(value, np.generic) else value
