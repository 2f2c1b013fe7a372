"""The OmegaConf resolvers ``conf/`` uses: the cache directory, a job's directory name, and the
datasets of a preset whose files are present. Registered by every command that composes ``conf/``
(``dpbench`` itself, and ``dpbench-status`` when it expands a sweep's jobs)."""

from __future__ import annotations

from dpbench.conf_files import default_cache_dir


def _job_dir_name(override_dirname: str) -> str:
    return override_dirname or "default"


def datasets_present(data_dir: str, *names: str) -> str:
    """Comma-join ``names`` for a preset's sweep, keeping a name marked optional (``?ipums_us``)
    only when its files are under ``data_dir`` and verify: IPUMS-US joins chen_lee's comparison
    when its file is there. Required names are always kept (a missing file then fails its job
    with the usual message)."""
    from pathlib import Path

    from dpbench.data import load_dataset
    from dpbench.errors import DataError

    kept = []
    for name in names:
        if not name.startswith("?"):
            kept.append(name)
            continue
        try:
            load_dataset(name[1:], {}, data_dir=Path(data_dir), allow_download=False)
        except DataError:
            continue
        kept.append(name[1:])
    return ",".join(kept)


def register_resolvers() -> None:
    """Resolvers used by ``conf/`` (idempotent)."""
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("dpbench_cache_dir"):
        OmegaConf.register_new_resolver("dpbench_cache_dir", lambda sub="": str(default_cache_dir() / sub))
    if not OmegaConf.has_resolver("dpbench_job_dir"):
        OmegaConf.register_new_resolver("dpbench_job_dir", _job_dir_name)
    if not OmegaConf.has_resolver("dpbench_datasets_present"):
        OmegaConf.register_new_resolver("dpbench_datasets_present", datasets_present)
