"""One look per method: every registered method has its own colour and marker, the same in
every figure, and a figure draws a method in it."""

from __future__ import annotations

import pandas as pd
from matplotlib.colors import to_hex

from dpbench.algorithms.palette import BLACK, TAB20
from dpbench.algorithms.registry import ALGORITHMS
from dpbench.plot import generic, han
from dpbench.plot.style import STYLES, style, variant


def test_every_method_has_its_own_colour_and_marker():
    assert {name: cls.look for name, cls in ALGORITHMS.items()} == STYLES
    looks = [(s.colour, s.marker, s.line) for s in STYLES.values()]
    assert len(looks) == len(set(looks))


def test_the_palette_is_matplotlibs_tab20_and_every_look_draws_from_it():
    from matplotlib import colormaps

    assert [to_hex(c) for c in colormaps["tab20"].colors] == list(TAB20)
    assert {look.colour for look in STYLES.values()} <= {*TAB20, BLACK}


def test_a_method_outside_the_table_still_looks_the_same_everywhere():
    assert style("a_new_method") == style("a_new_method") and style("a_new_method") != style("another_new_method")


def test_a_methods_other_configurations_keep_its_colour_and_change_marker_and_line():
    base, second = variant("dp_sgd", 0), variant("dp_sgd", 1)
    assert (
        base == style("dp_sgd")
        and second.colour == base.colour
        and (second.marker, second.line) != (base.marker, base.line)
    )


def test_figures_draw_each_method_in_its_colour():
    rows = pd.DataFrame(
        [
            {
                "algorithm": a,
                "dataset": "d",
                "eps": e,
                "test_accuracy": 0.8,
                "private": True,
                "fold": 0,
                "rep": 0,
                "config_hash": f"{a}{e}",
                "seed": 0,
                "p_lr": 0.1,
            }
            for a in ("dp_sgd", "dp_agd")
            for e in (0.1, 1.0)
        ]
    )
    ax = generic.accuracy_vs_eps(rows).axes[0]
    drawn = {c.get_label(): to_hex(c.lines[0].get_color()) for c in ax.containers}
    assert drawn == {"dp_sgd": style("dp_sgd").colour, "dp_agd": style("dp_agd").colour}
    assert han.STYLES["laplace_data"] == style("pwa_laplace_data")
