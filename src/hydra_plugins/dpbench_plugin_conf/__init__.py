"""Hydra's search path for dpbench: each installed plugin's ``conf/`` (``dpbench.conf`` entry points,
:mod:`dpbench.plugins`) after dpbench's own, so that a plugin's presets compose like the shipped ones,
then the presets made from the classes of methods without a preset file (:mod:`dpbench.class_presets`),
served by :class:`DpbenchMethodClasses`. Hydra finds this module in its ``hydra_plugins`` namespace in
every process that composes; it changes only searches whose primary config directory is dpbench's, never
another Hydra application's."""

from __future__ import annotations

from pathlib import Path

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin

CLASSES_SCHEME = "dpbench-class"


class DpbenchPluginConf(SearchPathPlugin):
    """Append every plugin's ``conf/``, then the method classes, to a search path that starts from
    dpbench's ``conf/``."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from dpbench.conf_files import config_dir
        from dpbench.plugins import plugin_conf_dirs

        ours = config_dir().resolve()
        paths = [entry.path for entry in search_path.get_path() if entry.provider == "main" and entry.path]
        if not any(Path(path.removeprefix("file://")).resolve() == ours for path in paths):
            return
        for conf, source in plugin_conf_dirs():
            search_path.append(provider=f"dpbench plugin {source.distribution}", path=f"file://{conf}")
        search_path.append(provider="dpbench method classes", path=f"{CLASSES_SCHEME}://")


class DpbenchMethodClasses(ConfigSource):
    """The config source of ``algorithm/<name>`` for every method without a preset file: which names
    exist is read from the sources without importing them; a method's node (every hyper-parameter at
    its class default, its tuning grid) is built from its class only when a composition loads it, so a
    command that selects another method never imports the methods."""

    @staticmethod
    def scheme() -> str:
        return CLASSES_SCHEME

    def available(self) -> bool:
        return True

    def _names(self) -> list[str]:
        from dpbench.class_presets import methods_without_a_preset_file

        return methods_without_a_preset_file()

    def _name(self, config_path: str) -> str | None:
        group, _, name = self._normalize_file_name(config_path.strip("/")).removesuffix(".yaml").rpartition("/")
        return name if group == "algorithm" and name in self._names() else None

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") in ("", "algorithm")

    def is_config(self, config_path: str) -> bool:
        return self._name(config_path) is not None

    def load_config(self, config_path: str) -> ConfigResult:
        from omegaconf import OmegaConf

        from dpbench.class_presets import class_preset_of

        name = self._name(config_path)
        return ConfigResult(
            config=OmegaConf.create(class_preset_of(name) if name is not None else {}),
            path=self.full_path(),
            provider=self.provider,
            header={"package": None},
        )

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        found: list[str] = []
        if config_path.strip("/") == "algorithm":
            for name in self._names():
                self._list_add_result(found, f"algorithm/{name}", f"{name}.yaml", results_filter)
        elif config_path.strip("/") == "":
            self._list_add_result(found, "algorithm", "algorithm", results_filter)
        return sorted(set(found))
