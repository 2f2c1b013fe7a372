"""``dpbench --help``: what a newcomer needs on one screen, built from the shipped ``conf/`` so it
cannot drift from it — how to run one job, a sweep (``-m``) and a preset; every config group with
the first comment line of each option's YAML; every key of ``conf/config.yaml`` with its default and
its comment; the presets; the companion commands; shell completion. Hydra's own help stays
available as ``dpbench --hydra-help``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from dpbench import __version__
from dpbench.conf_files import config_dir, group_choices, option_file
from dpbench.method_names import method_names
from dpbench.plugins import plugin_conf_dirs

GROUPS = ("dataset", "algorithm", "model", "privacy", "tuning")
KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w]*):(?P<value>[^#]*?)\s*(?:#\s?(?P<comment>.*))?$")
DEFAULTS_ENTRY = re.compile(r"^ +- (?P<group>[\w/]+): *(?P<option>[\w-]+)")
COMMENT_LINE = re.compile(r"^ +#\s?(?P<comment>.*)$")
SKIPPED_SECTIONS = ("defaults", "hydra")

USAGE = """\
usage:
  dpbench [KEY=VALUE ...]              run one job (default: DP-BLSGD on the embedded synthetic data, offline)
  dpbench -m KEY=A,B [KEY=C,D ...]     a sweep (multirun): one job per combination, into outputs/sweeps/<experiment_name>
  dpbench -m experiment=PRESET         a paper figure's or the leaderboard's sweep (presets below)
  dpbench --cfg job [KEY=VALUE ...]    print the composed configuration and stop
  dpbench check-method NAME            a method's self-test: constraints, tiny jobs, ledger, determinism, audit
  dpbench --hydra-help                 Hydra's own options (launchers: hydra/launcher=joblib runs jobs in parallel)

A finished job is skipped on rerun (force=true reruns it); an interrupted one resumes.
Results: outputs/runs/<overrides>/ (one job) or outputs/sweeps/<experiment_name>/<overrides>/ (a sweep),
each with results.parquet, trace.parquet and run.json."""

COMPANIONS = """\
companion commands:
  dpbench-plot FIGURE SWEEP_DIR --out DIR   redraw a paper figure or the leaderboard from a sweep (dpbench-plot --help)
  dpbench-report SWEEP_DIR ... --out FILE   one HTML page, offline: leaderboard, figures and claim verdicts, ledgers, status
  dpbench-status SWEEP_DIR                  which jobs of a sweep finished, failed, are incomplete or missing
  dpbench-verify DIR [--rerun K]            every row's ε recomputed from run.json (and by dp-accounting), budgets, reruns
  dpbench-publish DIR --out DIR2            only what the ε covers: guaranteed rows, public and release columns
  dpbench-audit [--targets NAMES]           empirical ε of the privacy mechanisms on worst-case neighbours

shell completion (bash): eval "$(dpbench -sc install=bash)"   (zsh: install=zsh, fish: install=fish)"""


def first_comment(path: Path) -> str:
    """The first comment line of a YAML file that is not a ``# @package`` directive."""
    for line in path.read_text().splitlines():
        text = line.strip()
        if text.startswith("#") and not text.startswith("# @package"):
            return text.lstrip("# ").strip()
    return ""


def config_keys(path: Path) -> list[tuple[str, str, str]]:
    """(dotted key, default, comment) of every key in ``path`` outside its ``defaults`` and ``hydra``
    sections; a comment line under a key continues its comment."""
    keys: list[tuple[str, str, str]] = []
    stack: list[tuple[int, str]] = []
    skipping = False
    for line in path.read_text().splitlines():
        match = KEY_LINE.match(line)
        if match:
            indent = len(match["indent"])
            stack = [(i, k) for i, k in stack if i < indent] + [(indent, match["key"])]
            skipping = stack[0][1] in SKIPPED_SECTIONS
            if not skipping:
                keys.append((".".join(k for _, k in stack), match["value"].strip(), (match["comment"] or "").strip()))
            continue
        continued = COMMENT_LINE.match(line)
        if continued and keys and not skipping:
            key, value, comment = keys[-1]
            keys[-1] = (key, value, f"{comment} {continued['comment'].strip()}".strip())
    return keys


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def help_text(width: int | None = None) -> str:
    """The text ``dpbench --help`` prints, lines clipped to ``width`` (default: the terminal's)."""
    width = width or max(100, shutil.get_terminal_size((120, 40)).columns)
    root = config_dir()
    lines = [f"dpbench {__version__}: a benchmark for differentially private optimisation", "", USAGE, ""]
    lines.append("config groups (GROUP=OPTION; the default is marked *):")
    defaults = _group_defaults(root / "config.yaml")
    sources = {conf: f"[from {source.distribution}] " for conf, source in plugin_conf_dirs()}
    for group in GROUPS:
        lines.append(f"  {group}:")
        for option in group_choices(group):
            mark = "*" if defaults.get(group) == option else " "
            lines.append(_clip(f"   {mark}{option:28s} {_described(group, option, root, sources)}", width))
    lines += ["", "keys (KEY=VALUE; default in brackets; a dotted key sets one field of a section):"]
    for key, value, comment in config_keys(root / "config.yaml"):
        shown = _clip(f"[{value}]", 16) if value else ""
        lines.append(_clip(f"  {key:24s} {shown:16s} {comment}", width))
    lines += [
        "  algorithm.*, dataset.*, model.*  the chosen option's own keys: `dpbench --cfg job algorithm=NAME` lists them"
    ]
    lines += ["", "presets (dpbench -m experiment=NAME):"]
    for name in group_choices("experiment"):
        lines.append(_clip(f"  {name:28s} {_described('experiment', name, root, sources)}", width))
    lines += ["", COMPANIONS]
    return "\n".join(lines)


def _described(group: str, option: str, root: Path, sources: dict[Path, str]) -> str:
    """An option's first comment, after where it comes from when not from the shipped ``conf/`` (first, so
    that a narrow terminal clips the description, not the source); for a method without a preset file, its
    class docstring's first line (and its plugin)."""
    path = option_file(group, option)
    if path is None:
        method = method_names().get(option) if group == "algorithm" else None
        if method is None:
            return ""
        return (f"[from {method.source.distribution}] " if method.source else "") + method.summary
    conf = path.parent.parent.resolve()
    origin = "" if conf == root.resolve() else sources.get(conf, f"[from {conf}] ")
    return origin + first_comment(path)


def _group_defaults(path: Path) -> dict[str, str]:
    """``{group: default option}`` from the ``defaults`` list of ``conf/config.yaml`` (its
    ``  - group: option`` lines; read as text, like :func:`config_keys`, so that ``--help``
    needs no YAML library)."""
    chosen: dict[str, str] = {}
    in_defaults = False
    for line in path.read_text().splitlines():
        if not line.startswith(" "):
            in_defaults = line.startswith("defaults:")
        elif in_defaults and (entry := DEFAULTS_ENTRY.match(line)):
            chosen[entry["group"]] = entry["option"]
    return chosen
