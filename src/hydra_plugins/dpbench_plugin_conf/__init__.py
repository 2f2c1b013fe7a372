"""Hydra's search path for dpbench: each installed plugin's ``conf/`` (``dpbench.conf`` entry points,
:mod:`dpbench.plugins`) after dpbench's own, so that a plugin's presets compose like the shipped ones,
and a preset made from its class for each method without a preset file (:mod:`dpbench.class_presets`).
Hydra finds this module in its ``hydra_plugins`` namespace and calls it in every process that composes;
it changes only searches whose primary config directory is dpbench's, never another Hydra application's."""

from __future__ import annotations

from pathlib import Path

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class DpbenchPluginConf(SearchPathPlugin):
    """Append every plugin's ``conf/`` to a search path that starts from dpbench's ``conf/``, and store
    the presets made from classes."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from dpbench.class_presets import register_class_presets
        from dpbench.conf_files import config_dir
        from dpbench.plugins import plugin_conf_dirs

        ours = config_dir().resolve()
        paths = [entry.path for entry in search_path.get_path() if entry.provider == "main" and entry.path]
        if not any(Path(path.removeprefix("file://")).resolve() == ours for path in paths):
            return
        for conf, source in plugin_conf_dirs():
            search_path.append(provider=f"dpbench plugin {source.distribution}", path=f"file://{conf}")
        register_class_presets()
