"""Job kinds: what one dpbench job computes, behind one small protocol (docs/architecture.md).

A job is one algorithm on one dataset under one privacy budget, for its runs (folds × reps). How
the runs are computed depends on the kind of problem the algorithm solves: a linear model trained
run by run (``glm``, :mod:`dpbench.jobs.glm`), han_pwa's piecewise-affine instance with all
repetitions as arrays (``pwa``, :mod:`dpbench.pwa.job`), kusner_bo's private tuning on cached
validation scores (``bo``, :mod:`dpbench.bo.job`). Each kind is an object with one method,
:meth:`~dpbench.jobs.kind.JobKind.run`, named in :data:`KINDS` by the ``problem_kind`` of the
algorithms it runs.

The engine (:mod:`dpbench.engine`) knows no kind: it looks one up here, runs it, checks that its
rows carry the core columns and its trace the trace identity (:mod:`dpbench.jobs.columns`), and
writes the files. This module is the table of kinds and imports nothing of dpbench, so that the
configuration and the algorithms can name the kinds without importing a job. Adding a kind is a
module, a line in :data:`KINDS` and, when its model is not a linear model, a line in
:data:`MODEL_KINDS`; the engine is unchanged.
"""

from __future__ import annotations

from importlib import import_module

#: problem_kind → ``module:object`` of its job kind, imported when a job of that kind runs.
KINDS: dict[str, str] = {
    "glm": "dpbench.jobs.glm:GLM_JOB",
    "pwa": "dpbench.pwa.job:PWA_JOB",
    "bo": "dpbench.bo.job:BO_JOB",
}
PWA_LOSS = "max_affine"  # model=pwa: han_pwa's f(x) = max_i (a_iᵀx + b_i)
BO_LOSS = "bo_target"  # model=bo: kusner_bo tunes the hyper-parameters of the model named by bo.target
#: model.loss → problem_kind for the losses that are not a linear model's (every other loss is ``glm``).
MODEL_KINDS: dict[str, str] = {PWA_LOSS: "pwa", BO_LOSS: "bo"}


def job_kind(problem_kind: str):
    """The job kind (a :class:`~dpbench.jobs.kind.JobKind`) registered for ``problem_kind``; a bug
    when there is none: config validation accepts only algorithms whose kind is registered."""
    try:
        module, name = KINDS[problem_kind].split(":")
    except KeyError:
        raise KeyError(f"no job kind for problem_kind {problem_kind!r}; known: {', '.join(KINDS)}") from None
    return getattr(import_module(module), name)
