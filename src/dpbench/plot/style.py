"""One look per method: the colour, marker and line style every figure (and ``dpbench-report``)
draws a method with, so that a method is recognised at a glance across papers.

Colours come from matplotlib's ``tab20`` palette; no two methods share both colour and marker. The
non-private references are black dashed (NON-PRIVATE) and grey dotted (MAJORITY). A name not in the
table (a new method) gets a fixed fallback from its name, so it too looks the same in every figure.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from matplotlib import colormaps
from matplotlib.colors import to_hex

_TAB20 = [to_hex(c) for c in colormaps["tab20"].colors]
(
    BLUE,
    LIGHT_BLUE,
    ORANGE,
    LIGHT_ORANGE,
    GREEN,
    LIGHT_GREEN,
    RED,
    LIGHT_RED,
    PURPLE,
    LIGHT_PURPLE,
    BROWN,
    LIGHT_BROWN,
    PINK,
    LIGHT_PINK,
    GREY,
    LIGHT_GREY,
    OLIVE,
    LIGHT_OLIVE,
    CYAN,
    LIGHT_CYAN,
) = _TAB20
BLACK = "#000000"


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    line: str = "-"


STYLES: dict[str, Style] = {
    # chen_lee: the line-search methods and their baselines
    "dp_blsgd": Style(RED, "o"),
    "dp_blsgd_ac": Style(LIGHT_RED, "o"),
    "dp_blgd": Style(ORANGE, "s"),
    "dp_agd": Style(BLUE, "^"),
    "dp_sgd": Style(GREEN, "v"),
    "objpert": Style(PURPLE, "D"),
    "outpert_gd": Style(BROWN, "P"),
    "outpert_rsgd": Style(LIGHT_BROWN, "X"),
    "privgene": Style(CYAN, "*"),
    # kuru_acc: gradient descent and its accelerated variants
    "dp_gd": Style(OLIVE, "o"),
    "dp_hb": Style(LIGHT_OLIVE, "s"),
    "dp_nag": Style(PINK, "^"),
    "dp_nag_opt": Style(LIGHT_PINK, "v"),
    "dp_masg": Style(LIGHT_BLUE, "D"),
    "dp_masg_opt": Style(LIGHT_PURPLE, "P"),
    # liu_dda: distributed dual averaging and its all-nodes baseline
    "dp_dda": Style(LIGHT_GREEN, "h"),
    "dp_dda_all_nodes": Style(BLACK, "^"),
    # han_pwa: the four mechanisms and the non-private subgradient method
    "pwa_laplace_data": Style(BLUE, "o"),
    "pwa_laplace_solution": Style(ORANGE, "D"),
    "pwa_exponential": Style(GREEN, "^"),
    "pwa_subgradient": Style(BLACK, "D"),
    "pwa_subgradient_nonprivate": Style(GREY, "x"),
    # kusner_bo
    "kusner_alg1": Style(BLUE, "s"),
    "kusner_alg2": Style(ORANGE, "*"),
    "kusner_alg3": Style(GREEN, "s"),
    "kusner_mtgp_likelihood": Style(PURPLE, "o"),
    # references
    "nonprivate": Style(BLACK, "", "--"),
    "majority": Style(GREY, "", ":"),
}
_FALLBACK_MARKERS = "odsv^<>ph8"
VARIANT_LINES = ("--", ":", "-.")
VARIANT_MARKERS = ("s", "^", "v", "D", "P", "X")


def style(algorithm: str) -> Style:
    """The style of ``algorithm`` (a registry name); a fixed one derived from the name otherwise."""
    if algorithm in STYLES:
        return STYLES[algorithm]
    digest = int(hashlib.sha256(algorithm.encode()).hexdigest(), 16)
    return Style(_TAB20[digest % len(_TAB20)], _FALLBACK_MARKERS[digest // len(_TAB20) % len(_FALLBACK_MARKERS)])


def variant(algorithm: str, k: int) -> Style:
    """The style of the ``k``-th configuration of ``algorithm`` drawn in one figure (k = 0: the method's
    own; later ones: its colour with another marker and line, so that configurations stay apart)."""
    base = style(algorithm)
    if k == 0:
        return base
    return Style(
        base.colour, VARIANT_MARKERS[(k - 1) % len(VARIANT_MARKERS)], VARIANT_LINES[(k - 1) % len(VARIANT_LINES)]
    )
