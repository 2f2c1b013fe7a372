"""``dpbench-report``: one self-contained HTML page for one or more sweeps, readable offline.

:mod:`dpbench.report.collect` gathers what a sweep directory holds (results, run.json ledgers and
provenance, job status, the paper figures its experiment draws, an audit file when there is one);
:mod:`dpbench.report.page` writes the page (inline CSS, figures as base64 PNG, a few lines of inline
script to sort tables; nothing is fetched); :mod:`dpbench.report.cli` is the command.
"""
