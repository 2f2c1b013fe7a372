"""The colours a method's :class:`~dpbench.algorithms.base.Look` may take: matplotlib's ``tab20``
palette as hex strings (tests/plot/test_style.py checks them against matplotlib), and black, so that
a method declares its look without importing matplotlib."""

from __future__ import annotations

BLUE, LIGHT_BLUE = "#1f77b4", "#aec7e8"
ORANGE, LIGHT_ORANGE = "#ff7f0e", "#ffbb78"
GREEN, LIGHT_GREEN = "#2ca02c", "#98df8a"
RED, LIGHT_RED = "#d62728", "#ff9896"
PURPLE, LIGHT_PURPLE = "#9467bd", "#c5b0d5"
BROWN, LIGHT_BROWN = "#8c564b", "#c49c94"
PINK, LIGHT_PINK = "#e377c2", "#f7b6d2"
GREY, LIGHT_GREY = "#7f7f7f", "#c7c7c7"
OLIVE, LIGHT_OLIVE = "#bcbd22", "#dbdb8d"
CYAN, LIGHT_CYAN = "#17becf", "#9edae5"
BLACK = "#000000"

TAB20 = (
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
)
"""``tab20`` in matplotlib's order."""
