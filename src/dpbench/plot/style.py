"""One look per method: the colour, marker and line style every figure (and ``dpbench-report``)
draws a method with, so that a method is recognised at a glance across papers.

Each method declares its :class:`~dpbench.algorithms.base.Look` on its class, in colours of matplotlib's
``tab20`` palette (:mod:`dpbench.algorithms.palette`); no two methods share both colour and marker. The
non-private references are black dashed (NON-PRIVATE) and grey dotted (MAJORITY). A name no method
has (rows of a method since renamed) gets a fixed fallback from its name, so it too looks the same in
every figure.
"""

from __future__ import annotations

import hashlib

from dpbench.algorithms.base import Look
from dpbench.algorithms.palette import TAB20
from dpbench.algorithms.registry import ALGORITHMS

STYLES: dict[str, Look] = {name: cls.look for name, cls in ALGORITHMS.items()}
"""Every method's own look (its class's ``look``)."""
_FALLBACK_MARKERS = "odsv^<>ph8"
VARIANT_LINES = ("--", ":", "-.")
VARIANT_MARKERS = ("s", "^", "v", "D", "P", "X")


def style(algorithm: str) -> Look:
    """The style of ``algorithm`` (a registry name); a fixed one derived from the name otherwise."""
    if algorithm in STYLES:
        return STYLES[algorithm]
    digest = int(hashlib.sha256(algorithm.encode()).hexdigest(), 16)
    return Look(TAB20[digest % len(TAB20)], _FALLBACK_MARKERS[digest // len(TAB20) % len(_FALLBACK_MARKERS)])


def variant(algorithm: str, k: int) -> Look:
    """The style of the ``k``-th configuration of ``algorithm`` drawn in one figure (k = 0: the method's
    own; later ones: its colour with another marker and line, so that configurations stay apart)."""
    base = style(algorithm)
    if k == 0:
        return base
    return Look(
        base.colour, VARIANT_MARKERS[(k - 1) % len(VARIANT_MARKERS)], VARIANT_LINES[(k - 1) % len(VARIANT_LINES)]
    )
