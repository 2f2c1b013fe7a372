"""The report page: one HTML file that needs nothing but itself.

Styles are inline (one ``<style>``; each method's swatch in its figure colour, :mod:`dpbench.plot.style`), figures are base64 PNG ``<img>``, tables sort on a click of
their header (one short inline ``<script>``), and there is no external URL anywhere in the page, so
it renders the same with the network off. Every section is a ``<section>`` with a stable id
(``leaderboard``, then per sweep ``sweep-<i>``, ``sweep-<i>-figures``, ``-ledgers``, ``-status``,
``-provenance``) that tests and links use.
"""

from __future__ import annotations

import html
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from dpbench import code_identity
from dpbench.plot.style import style

if TYPE_CHECKING:
    from dpbench.report.collect import FigureSection, MethodLedger, SweepSummary

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 24px; }
header p { margin: 0; color: #c9d1e0; }
nav { background: #fff; border-bottom: 1px solid #dde2ea; padding: 10px 32px; }
nav a { margin-right: 18px; color: #2456b3; text-decoration: none; }
main { padding: 8px 32px 40px; max-width: 1200px; }
section { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 14px 20px; margin: 18px 0; }
section section { border: none; padding: 0; margin: 12px 0; }
h2 { margin-top: 4px; font-size: 20px; } h3 { font-size: 17px; margin-bottom: 6px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13.5px; }
th, td { border: 1px solid #dde2ea; padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: #eef1f6; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " \\25B2"; } th.sorted-desc::after { content: " \\25BC"; }
img.figure { max-width: 100%; border: 1px solid #eef1f6; }
.verdict { display: inline-block; min-width: 54px; text-align: center; font-weight: 600; border-radius: 4px; padding: 0 6px; }
.HOLDS, .ok { background: #dff3e4; color: #17602b; } .FAILS, .bad { background: #fbe0e0; color: #8a1c1c; }
.PARTLY, .stale { background: #fdf0d5; color: #7a4b00; } .verdict:not(.HOLDS):not(.FAILS):not(.PARTLY):not(.ok):not(.bad):not(.stale) { background: #eceff3; color: #333; }
.muted { color: #6b7587; } .error { color: #8a1c1c; } code { background: #eef1f6; padding: 0 3px; border-radius: 3px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
details { margin: 6px 0; } summary { cursor: pointer; color: #2456b3; }
"""

# Sort a table by the clicked header: numbers numerically, text alphabetically; a second click reverses.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach((th, col) => th.addEventListener("click", () => {
  const body = th.closest("table").tBodies[0], asc = !th.classList.contains("sorted-asc");
  th.closest("tr").querySelectorAll("th").forEach(h => h.classList.remove("sorted-asc", "sorted-desc"));
  th.classList.add(asc ? "sorted-asc" : "sorted-desc");
  const key = r => { const t = r.cells[col].textContent.trim(), n = parseFloat(t); return isNaN(n) ? t : n; };
  [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
    return (typeof x === typeof y ? (x > y) - (x < y) : typeof x === "number" ? -1 : 1) * (asc ? 1 : -1);
  }).forEach(r => body.appendChild(r));
}));
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def table(headers: list[str], rows: list[list], sortable: bool = True) -> str:
    """An HTML table; cells are escaped unless given as ``Raw``."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if isinstance(c, Raw) else esc(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<div class="scroll"><table class="{"sortable" if sortable else ""}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


class Raw(str):
    """HTML that :func:`table` inserts as it is."""


def verdict(word: str) -> Raw:
    return Raw(f'<span class="verdict {esc(word.replace(" ", "-"))}">{esc(word)}</span>')


def markdown_html(text: str) -> str:
    """A figure summary (markdown with tables) as HTML; its tables become sortable."""
    import markdown

    return markdown.markdown(text, extensions=["tables"]).replace("<table>", '<table class="sortable">')


def _number(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4g}"


# -------------------------------------------------------------------------------- sections
def leaderboard_section(leaderboard: FigureSection | None) -> str:
    if leaderboard is None:
        body = (
            '<p class="muted">No leaderboard sweep among these. <code>dpbench -m experiment=leaderboard '
            "hydra/launcher=joblib</code> runs one; give its directory to <code>dpbench-report</code>.</p>"
        )
    else:
        body = figure_html(leaderboard, heading=False, tables_open=True)
    return f'<section id="leaderboard"><h2>Leaderboard</h2>{body}</section>'


def figure_html(figure: FigureSection, heading: bool = True, tables_open: bool = False) -> str:
    parts = [f"<h3>{esc(figure.name)}</h3>" if heading else "", f'<p class="muted">{esc(figure.description)}</p>']
    if figure.error:
        parts.append(f'<p class="error">not drawn: {esc(figure.error)}</p>')
    if figure.claims:
        rows = [
            [
                verdict(c.verdict),
                c.claim,
                Raw("<br>".join(esc(e) for e in c.evidence[:6]) + ("<br>…" if len(c.evidence) > 6 else "")),
            ]
            for c in figure.claims
        ]
        parts.append("<h4>Claims</h4>" + table(["verdict", "claim", "numbers"], rows))
    if figure.png_base64:
        parts.append(f'<img class="figure" alt="{esc(figure.name)}" src="data:image/png;base64,{figure.png_base64}">')
    if figure.summary_markdown:
        opened = " open" if tables_open else ""
        parts.append(
            f"<details{opened}><summary>Summary tables</summary>{markdown_html(figure.summary_markdown)}</details>"
        )
    return f'<section class="figure" data-figure="{esc(figure.name)}">{"".join(parts)}</section>'


def ledgers_html(ledgers: list[MethodLedger]) -> str:
    rows = []
    for m in ledgers:
        events = ", ".join(f"{kind} × {n}" for kind, n in m.events.items()) or ("—" if m.private else "non-private")
        audits = "; ".join(
            f"{a.get('name')}: {a.get('verdict', a.get('status', '?'))} (ε̂ {_number(a.get('eps_hat', math.nan))})"
            for a in m.audit
        ) or ("not audited in this directory" if m.private else "—")
        if m.audit_gaps:
            audits += f"; not audited: {m.audit_gaps}"
        spent = (verdict("ok") if m.within_budget else verdict("bad")) if m.private else ""
        rows.append(
            [
                Raw(f'<span class="swatch" style="background:{style(m.algorithm).colour}"></span>{esc(m.algorithm)}'),
                m.paper,
                ", ".join(m.accountants) or "none",
                ", ".join(m.neighbouring),
                ", ".join(m.privacy_units),
                ", ".join(m.conversions),
                ", ".join(m.stopping_rules),
                ", ".join(f"{b:g}" for b in m.budgets),
                Raw(f"{esc(_number(m.eps_spent_max))} ({esc(_number(m.spent_share_max))} of its budget) {spent}"),
                m.runs,
                events,
                audits,
            ]
        )
    headers = [
        "method",
        "paper",
        "accountant",
        "neighbouring",
        "privacy unit",
        "conversion",
        "stopping rule",
        "ε budgets",
        "max ε spent",
        "runs",
        "releases of one run",
        "audit",
    ]
    return table(headers, rows)


def status_html(summary: SweepSummary) -> str:
    parts = [f"<p>{esc(summary.status_line)}</p>"]
    if summary.failed:
        parts.append("<h4>Failed jobs</h4>" + table(["job", "error"], [list(f) for f in summary.failed]))
    if summary.unfinished:
        parts.append("<h4>Unfinished jobs</h4>" + table(["job", "status"], [list(u) for u in summary.unfinished]))
    if summary.stale:
        parts.append(
            f"<h4>Stale jobs {verdict('stale')}</h4><p>Computed by other dpbench code than "
            f"{esc(code_identity.current().identity)}, which wrote this page; rerunning the sweep "
            "(<code>resume=strict</code>, the default) recomputes them.</p>"
            + table(["job", "code"], [list(s) for s in summary.stale])
        )
    return "".join(parts)


def provenance_html(p: dict) -> str:
    rows = [
        ["dpbench version", ", ".join(p["dpbench_versions"])],
        ["code identity (dpbench.code_identity)", ", ".join(p["code_identities"])],
        ["configurations (config hashes)", p["config_hashes"]],
        ["jobs with run.json", p["jobs_with_run_json"]],
        ["python", ", ".join(p["python"])],
        ["packages", ", ".join(p["packages"])],
        ["machines", "; ".join(p["machines"]) or "not recorded"],
    ]
    datasets = table(["dataset", "checksum"], [[name, checksum] for name, checksum in p["datasets"].items()])
    return table(["what", "value"], rows, sortable=False) + "<h4>Datasets</h4>" + datasets


def sweep_section(index: int, summary: SweepSummary) -> str:
    sid = f"sweep-{index}"
    figures = "".join(figure_html(f) for f in summary.figures if f.name != "leaderboard")
    if not figures:
        on_board = any(f.name == "leaderboard" for f in summary.figures)
        figures = f'<p class="muted">{"Its figure is the leaderboard above." if on_board else "No paper figure for this sweep."}</p>'
    title = ", ".join(summary.experiments) or summary.path.name
    return (
        f'<section id="{sid}"><h2>{esc(title)}</h2><p class="muted"><code>{esc(summary.path)}</code> · '
        f"{len(summary.results)} result rows</p>"
        f'<section id="{sid}-figures"><h3>Figures and claims</h3>{figures}</section>'
        f'<section id="{sid}-ledgers"><h3>Privacy ledgers</h3>{ledgers_html(summary.ledgers)}</section>'
        f'<section id="{sid}-status"><h3>Sweep status</h3>{status_html(summary)}</section>'
        f'<section id="{sid}-provenance"><h3>Provenance</h3>{provenance_html(summary.provenance)}</section>'
        "</section>"
    )


PUBLISHABLE_NOTE = (
    "Publishable view (dpbench-publish): only rows whose guarantee holds and only their public and release columns "
    "— the ε spent, the ledgers, the released hyper-parameters and noisy scores. Test accuracies, objectives, "
    "timings and counts that follow private randomness are measurements: they are not in this page, and neither "
    "are the figures drawn from them."
)


def render(summaries: list[SweepSummary], publishable: bool = False) -> str:
    """The whole page for ``summaries`` (one per sweep directory), index first; ``publishable`` says at
    the top that the page shows the publishable view only (:data:`PUBLISHABLE_NOTE`)."""
    leaderboard = next((f for s in summaries for f in s.figures if f.name == "leaderboard"), None)
    index_rows = [
        [
            Raw(f'<a href="#sweep-{i}">{esc(", ".join(s.experiments) or s.path.name)}</a>'),
            str(s.path),
            len(s.results),
            s.status_line,
            sum(c.verdict == "HOLDS" for f in s.figures for c in f.claims),
            sum(c.verdict == "FAILS" for f in s.figures for c in f.claims),
            sum(c.verdict not in ("HOLDS", "FAILS") for f in s.figures for c in f.claims),
        ]
        for i, s in enumerate(summaries)
    ]
    index = (
        '<section id="index"><h2>Sweeps</h2>'
        + table(
            ["sweep", "directory", "rows", "status", "claims holding", "claims failing", "other verdicts"], index_rows
        )
        + "</section>"
    )
    nav = '<a href="#index">Sweeps</a><a href="#leaderboard">Leaderboard</a>' + "".join(
        f'<a href="#sweep-{i}">sweep {esc(", ".join(s.experiments) or s.path.name)}</a>'
        for i, s in enumerate(summaries)
    )
    written = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dpbench report</title><style>{STYLE}</style></head><body>"
        f"<header><h1>dpbench report</h1><p>{len(summaries)} sweep(s) · written {written} by dpbench {esc(code_identity.current().identity)}</p>"
        + (f'<p class="publishable">{esc(PUBLISHABLE_NOTE)}</p>' if publishable else "")
        + "</header>"
        f"<nav>{nav}</nav><main>{index}{leaderboard_section(leaderboard)}"
        + "".join(sweep_section(i, s) for i, s in enumerate(summaries))
        + f"</main><script>{SCRIPT}</script></body></html>\n"
    )
