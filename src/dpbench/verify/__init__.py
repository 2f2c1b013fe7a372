"""``dpbench-verify DIR``: trust what is on disk.

Over every ``results.parquet`` under DIR (a job directory, a sweep or a tree of them) with the
``run.json`` beside it, :mod:`dpbench.verify.checks` recomputes each row's ε from the ledger events
run.json recorded, checks the budget and that the two files describe the same runs, and checks what
each row means against the job's configuration (its relation, guarantee, stopping order, paid
releases and noise key);
:mod:`dpbench.verify.independent` prices the same events with Google's dp-accounting (RDP and PLD)
where they are expressible there; :mod:`dpbench.verify.rerun` reruns a seeded sample of jobs from
their recorded configuration and compares every results column but wall time bit for bit.
:mod:`dpbench.verify.cli` is the command (docs/verify.md). Nothing is written into DIR.
"""
