"""A method's class is its preset: ``algorithm=NAME`` composes for a method without a preset file.

For every installed method (:func:`~dpbench.method_names.method_names`) that no config directory has a
``algorithm/NAME.yaml`` for, Hydra's ConfigStore gets the node ``algorithm/NAME``: the name, every
hyper-parameter at the class default and the class's tuning grid
(:func:`~dpbench.algorithms.registry.class_preset`), so ``dpbench --cfg job algorithm=NAME`` lists its keys
and ``algorithm.KEY=VALUE`` overrides them as for a shipped preset. A preset file, where there is one,
wins: it documents the method's keys beside their values and may select other groups (``override
/model``) or settings (``data.row_norm``); tests check its values against the class.

:class:`hydra_plugins.dpbench_plugin_conf.DpbenchPluginConf` calls :func:`register_class_presets` each time
Hydra builds dpbench's search path, in every process that composes (a sweep's, ``dpbench-verify --rerun``'s).
"""

from __future__ import annotations

from dpbench.conf_files import option_file
from dpbench.method_names import method_names


def methods_without_a_preset_file() -> list[str]:
    """The installed methods no config directory has an ``algorithm/<name>.yaml`` for."""
    return sorted(name for name in method_names() if option_file("algorithm", name) is None)


def register_class_presets() -> None:
    """Store ``algorithm/<name>`` in Hydra's ConfigStore for each method without a preset file. The
    method registry (every method's module) is imported only when there is such a method."""
    names = methods_without_a_preset_file()
    if not names:
        return
    from hydra.core.config_store import ConfigStore

    from dpbench.algorithms.registry import ALGORITHMS, class_preset

    store = ConfigStore.instance()
    for name in names:
        if name in ALGORITHMS:  # a name the registry does not confirm is refused as unknown when resolved
            store.store(group="algorithm", name=name, node=class_preset(ALGORITHMS[name]))
