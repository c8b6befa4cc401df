"""The engines dbladder knows: each one registered in one place, its package's `KIND`.

An engine is a package that names its registration under the entry point group `dbladder.engines`,
as a package adds a workload under `dbladder.workloads`; dbladder's own three do the same in its
pyproject.toml, so nothing outside an engine's package lists the engines:

    [project.entry-points."dbladder.engines"]
    sqlite = "dbladder.engines.sqlite:KIND"

A registration is an `EngineKind`: the plain facts any part of dbladder may ask about (its name,
label, URL schemes, whether it runs in-process or has a server, how its settings are written out,
what an app's DATABASE_URL calls it, where its password comes from), the settings of how dbladder
runs it beyond its URL (`RunSetting`: SQLite's one writer), and where each of its parts is, as
"module:attribute" text imported when first asked for (`load`): the Engine class, its dialect,
activity probe, storage reader and settings file, and a server dbladder can start for it.

The registration's module must import no driver: every process that parses a URL reads the group
(once, at its first question, not at import: the command line's start-up pays nothing for it), and
so do the reports, which never touch an engine. docs/engines.md says how to add one.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from .errors import UnknownEngine

ENTRY_POINT_GROUP = "dbladder.engines"


@dataclass(frozen=True)
class RunSetting:
    """A setting of how dbladder runs an engine beyond what its URL says (the URL's query string
    holds the engine's own settings, such as SQLite's journal_mode), declared by the engine.

    A run's and a service's config carry it in their `engine_settings` under `key`, and so does
    result.json; the command line sets it with `option`. Code outside the engine asks what it does
    (`writer_processes`) and how to word it, never for its name."""

    key: str  # in a config, result.json, /stats and a preset: "sqlite_writers"
    option: str  # the command line's option: "--sqlite-writers"
    help: str  # the option's help
    choices: tuple[int, ...] = (0, 1)  # the values it takes, the default first
    wording: tuple[str, ...] = ()  # what each choice means, in the same order
    fact: str = ""  # the line of a report's setup that shows it ("SQLite writers"); "": none
    run_label: str = ""  # added to a run's label when the value is not the default: ", one writer"
    # The value is the number of writer processes the service starts, each taking every write of
    # every worker through one connection (dbladder.service.writer).
    writer_processes: bool = False

    @property
    def default(self) -> int:
        return self.choices[0]

    def meaning(self, value: object) -> str:
        """What `value` means (the default's meaning for None, as an older result may hold)."""
        value = self.default if value is None else value
        if value in self.choices and len(self.wording) == len(self.choices):
            return self.wording[self.choices.index(value)]
        return str(value)


@dataclass(frozen=True)
class EngineKind:
    """What kind of engine a URL names, and where its parts are: one engine's registration.

    The facts are what every part of dbladder may ask about (reports included, which never touch
    an engine). The parts are "module:attribute" text (or a module alone), imported by `load` when
    first asked for: how each engine differs lives in its package, behind these parts.
    """

    name: str  # "sqlite", "postgresql", "mariadb": the name results and reports carry
    label: str  # "SQLite", "PostgreSQL", "MariaDB": as people write it
    # The engine runs inside the process that uses it (SQLite, a library): no server, no connection,
    # no process of its own to find, observe, kill or restart. Its URL names a file
    # (scheme:///relative.db, scheme:////abs/path.db); a server's names a host, a port and a database.
    in_process: bool
    # How the engine is configured, for writing a result's settings back out as the file a reader
    # would copy: "postgresql.conf", "option file" (MariaDB's .cnf), "pragmas" (SQLite's).
    settings_format: str
    # The URL schemes that name it, its own first: "postgresql", "postgres" (others' spelling).
    schemes: tuple[str, ...] = ()
    # The scheme frameworks read in an app's DATABASE_URL (dj-database-url, Rails): "postgres".
    app_scheme: str = ""
    # The environment variable the engine's own client takes a password from: PGPASSWORD.
    password_variable: str | None = None

    # Its parts, imported when first asked for (`load`):
    engine_class: str = ""  # the `engines.base.Engine` class
    dialect: str = ""  # its `engines.dialect.Dialect`
    activity_probe: str = ""  # its `engines.base.ActivityProbe` class: probe(url, counters)
    storage_reader: str = ""  # its cache counters and size on disk (`engines.storage.StorageReader`)
    # (values, isolation) -> (caption, lines): the settings a run recorded, as the file to copy
    settings_writer: str = ""
    managed_server: str | None = None  # the `servers.kind.ServerKind` class of a server dbladder starts
    # (url, environ) -> url: the password when it comes from more than `password_variable`
    credentials: str | None = None
    run_settings: tuple[RunSetting, ...] = ()

    @property
    def has_server(self) -> bool:
        """A server the client connects to, with processes of its own to find and observe."""
        return not self.in_process

    def problems(self) -> list[str]:
        """What this registration lacks, each naming the field."""
        required = ("engine_class", "dialect", "activity_probe", "storage_reader", "settings_writer")
        problems = [f"{name} is not given" for name in required if not getattr(self, name)]
        if not self.schemes:
            problems.append("schemes names no URL scheme")
        problems += [f"the scheme {s!r} is not lower case" for s in self.schemes if s != s.lower()]
        for setting in self.run_settings:
            if not setting.choices:
                problems.append(f"run setting {setting.key} has no choices")
        return problems


def load(locator: str) -> Any:
    """The object `locator` names: "package.module:attribute", or "package.module" for the module."""
    module_name, _, attribute = locator.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


@dataclass(frozen=True)
class Registry:
    """Every engine the installed packages register, read from the entry point group."""

    kinds: Mapping[str, EngineKind]  # engine name -> its kind, in the order registered
    schemes: Mapping[str, str]  # URL scheme -> engine name
    refused: tuple[str, ...] = ()  # registrations that could not be taken, and why

    def explained(self) -> str:
        """What is known, for an error message: the schemes, and any registration refused."""
        if not self.kinds:
            known = (
                f"none: no package registers an engine under {ENTRY_POINT_GROUP!r}; dbladder's own "
                "registrations are missing, so reinstall it (pip install -e .)"
            )
        else:
            known = ", ".join(sorted(self.schemes))
        refused = "; ".join(self.refused)
        return known + (f" (not loaded: {refused})" if refused else "")


@functools.cache
def registered() -> Registry:
    """The engines installed packages register (read once a process: see the module's notes).

    A registration that cannot be loaded, is not an EngineKind, lacks a part or takes a scheme
    another has taken is left out and said why in `refused`, so one broken package does not stop
    the others; dbladder's own registrations come first.
    """
    # dbladder's own first, then by name: the same order whatever order the metadata lists them in.
    found = sorted(
        entry_points(group=ENTRY_POINT_GROUP),
        key=lambda entry: (not entry.value.startswith("dbladder."), entry.name),
    )
    kinds: dict[str, EngineKind] = {}
    schemes: dict[str, str] = {}
    settings: dict[str, str] = {}  # run setting key -> the engine that declares it
    refused = []
    for entry in found:
        where = f"{entry.name} = {entry.value}"
        try:
            kind = entry.load()
        except Exception as exc:  # a package's own import error: said, not raised
            refused.append(f"{where}: {type(exc).__name__}: {exc}")
            continue
        problems = kind.problems() if isinstance(kind, EngineKind) else ["it is not an EngineKind"]
        if isinstance(kind, EngineKind):
            if kind.name != entry.name:
                problems.append(f"its name is {kind.name!r}, not the entry point's {entry.name!r}")
            if kind.name in kinds:
                problems.append(f"the engine {kind.name!r} is registered already")
            problems += [f"the scheme {s!r} is {schemes[s]}'s" for s in kind.schemes if s in schemes]
            problems += [
                f"the run setting {setting.key!r} is {settings[setting.key]}'s"
                for setting in kind.run_settings
                if setting.key in settings
            ]
        if problems:
            refused.append(f"{where}: {'; '.join(problems)}")
            continue
        kinds[kind.name] = kind
        schemes.update(dict.fromkeys(kind.schemes, kind.name))
        settings.update({setting.key: kind.name for setting in kind.run_settings})
    return Registry(kinds, schemes, tuple(refused))


def known_kinds() -> tuple[EngineKind, ...]:
    """Every registered engine's kind, dbladder's own first, each group by name."""
    return tuple(registered().kinds.values())


def engine_kind(name: str) -> EngineKind:
    """The kind of the engine called `name` (as a result records it), or UnknownEngine."""
    registry = registered()
    kind = registry.kinds.get(name)
    if kind is None:
        raise UnknownEngine(f"unknown database engine {name!r}; known engines: {', '.join(registry.kinds)}")
    return kind


def kind_of_scheme(scheme: str, shown: str) -> EngineKind:
    """The kind of engine a URL scheme names; UnknownEngine quoting `shown` (the redacted URL)."""
    registry = registered()
    name = registry.schemes.get(scheme.lower())
    if name is None:
        raise UnknownEngine(
            f"unknown database engine {scheme!r} in {shown!r}; known schemes: {registry.explained()}"
        )
    return registry.kinds[name]


def runs_in_process(name: object) -> bool:
    """Whether the engine a result names (any value, as read from JSON) runs in-process: SQLite."""
    kind = registered().kinds.get(name) if isinstance(name, str) else None
    return kind is not None and kind.in_process


def run_settings() -> dict[str, tuple[RunSetting, EngineKind]]:
    """Every registered engine's run settings by key, each with the engine that declares it."""
    return {setting.key: (setting, kind) for kind in known_kinds() for setting in kind.run_settings}


def settings_with_defaults(given: Mapping[str, int]) -> dict[str, int]:
    """Every registered run setting with its value in `given`, else its default: what a run's
    config and result.json hold (so a result always says how each setting was, as before)."""
    return {key: given.get(key, setting.default) for key, (setting, _) in run_settings().items()}


def writer_processes(settings: Mapping[str, int]) -> int:
    """How many writer processes these settings ask the service for (0: every connection writes)."""
    declared = run_settings()
    return sum(
        int(value) for key, value in settings.items() if key in declared and declared[key][0].writer_processes
    )


def engine_setting_problems(settings: Mapping[str, object], kind: EngineKind | None) -> list[str]:
    """Every problem with run settings for an engine of `kind` (None: not known yet), each naming
    the setting: one no engine declares, a value it does not take, or one set for another engine."""
    declared = run_settings()
    problems = []
    for key, value in settings.items():
        if key not in declared:
            known = ", ".join(declared) or "none"
            problems.append(f"{key} is not a setting of any engine dbladder knows; known: {known}")
            continue
        setting, owner = declared[key]
        if value not in setting.choices:
            choices = [f"{c} ({setting.meaning(c)})" if setting.wording else str(c) for c in setting.choices]
            allowed = f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]
            problems.append(f"{key} must be {allowed}, not {value!r}")
        elif kind is not None and value != setting.default and setting not in kind.run_settings:
            problems.append(f"{key}={value} applies to {owner.label} only, not to {kind.name}")
    return problems


def label_of(name: object) -> str:
    """The label of the engine a result names ("PostgreSQL" for "postgresql"), as people write it;
    the name itself for an engine no installed package registers."""
    kind = registered().kinds.get(name) if isinstance(name, str) else None
    return kind.label if kind is not None else str(name)


def run_label(settings: Mapping[str, Any]) -> str:
    """What these run settings add to a run's label (", one writer"): each one not at its default."""
    declared = run_settings()
    return "".join(
        declared[key][0].run_label
        for key, value in settings.items()
        if key in declared and value not in (None, declared[key][0].default)
    )


def setting_facts(engine: object, settings: Mapping[str, Any]) -> dict[str, str]:
    """The lines a report's setup shows for the run settings of the engine a result names
    ({"SQLite writers": "every connection writes"}), each setting its engine declares with a fact."""
    kind = registered().kinds.get(engine) if isinstance(engine, str) else None
    if kind is None:
        return {}
    return {s.fact: s.meaning(settings.get(s.key)) for s in kind.run_settings if s.fact}
