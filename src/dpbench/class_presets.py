"""A method's class is its preset: ``algorithm=NAME`` composes for a method without a preset file.

For every installed method (:func:`~dpbench.method_names.method_names`) that no config directory has an
``algorithm/NAME.yaml`` for, Hydra finds ``algorithm/NAME`` in a config source of dpbench's
(:class:`hydra_plugins.dpbench_plugin_conf.DpbenchMethodClasses`, after every config directory on the
search path): the name, every hyper-parameter at the class default and the class's tuning grid
(:func:`~dpbench.algorithms.registry.class_preset`), so ``dpbench --cfg job algorithm=NAME`` lists its keys
and ``algorithm.KEY=VALUE`` overrides them as for a shipped preset. The node is built only when a
composition selects the method, so selecting another one imports no method. A preset file, where there is
one, wins: it documents the method's keys beside their values and may select other groups (``override
/model``) or settings (``data.row_norm``); tests check its values against the class.
"""

from __future__ import annotations

from typing import Any

from dpbench.conf_files import option_file
from dpbench.method_names import method_names


def methods_without_a_preset_file() -> list[str]:
    """The installed methods no config directory has an ``algorithm/<name>.yaml`` for."""
    return sorted(name for name in method_names() if option_file("algorithm", name) is None)


def class_preset_of(name: str) -> dict[str, Any]:
    """The ``algorithm`` section method ``name``'s class makes (imports the method registry); a name the
    registry does not confirm gets ``{"name": name}``, refused as unknown when resolved."""
    from dpbench.algorithms.registry import ALGORITHMS, class_preset

    return class_preset(ALGORITHMS[name]) if name in ALGORITHMS else {"name": name}
