"""Finding a workload by what the user typed: a name, a file, a module attribute, an installed package.

    --workload shop                     a built-in workload
    --workload ./todo.py                a Python file that defines `workload`
    --workload mypackage.load:workload  an attribute of an importable module
    --workload mine                     a workload an installed package registers under the
                                        entry-point group "dbladder.workloads"

Loading runs the user's code, so every failure (a syntax error, an exception at import, a missing
`workload`, an invalid declaration) becomes one WorkloadError line that names the file and what
is wrong, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from ..errors import UsageError
from .base import Workload, WorkloadError

BUILT_IN = {
    "shop": "dbladder.workloads.shop:workload",
    "orm": "dbladder.workloads.orm:workload",
    "chirp": "dbladder.workloads.chirp:workload",
}
ENTRY_POINT_GROUP = "dbladder.workloads"
APP_REQUESTS = "app-requests:"
"""`app-requests:STATE.json`: the user's app (`--app`, `--requests`) as the load's processes load it:
its request file with the run's sessions and rows, a state file the round wrote (dbladder.app)."""
APP_FACTORY = "dbladder.app.workload:from_state"
DEFAULT_WORKLOAD = "shop"


def load_workload(spec: str) -> Workload:
    """The workload `spec` names, checked; WorkloadError saying what is wrong otherwise."""
    spec = (spec or "").strip()
    if not spec:
        raise WorkloadError(
            "give a workload: a name (dbladder workloads lists them), a .py file or module:attr"
        )
    if spec.startswith(APP_REQUESTS):
        factory = _from_attribute(APP_FACTORY, "the user's app")
        return _checked(factory(Path(spec[len(APP_REQUESTS) :])), spec)  # type: ignore[operator]
    if spec.endswith(".py") or "/" in spec or Path(spec).is_file():
        return _checked(_from_file(Path(spec)), spec)
    if spec in BUILT_IN:
        return _checked(_from_attribute(BUILT_IN[spec], "built-in"), spec)
    if ":" in spec:
        return _checked(_from_attribute(spec, spec), spec)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == spec:
            return _checked(_from_attribute(entry.value, f"entry point {entry.name} ({entry.value})"), spec)
    known = ", ".join([*BUILT_IN, *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))])
    raise WorkloadError(f"unknown workload {spec!r}; known: {known}; or give a .py file or module:attr")


@dataclass(frozen=True)
class Listed:
    """One line of `dbladder workloads`: a workload, or why it could not be loaded."""

    name: str
    source: str
    workload: Workload | None
    problem: str = ""


def available(extra: tuple[str, ...] = ()) -> list[Listed]:
    """The built-in workloads, those installed packages register, and any `extra` specs (files)."""
    specs = [(name, "built-in") for name in BUILT_IN]
    specs += [(entry.name, f"entry point ({entry.value})") for entry in entry_points(group=ENTRY_POINT_GROUP)]
    specs += [(spec, spec) for spec in extra]
    listed = []
    for name, source in specs:
        try:
            workload = load_workload(name)
        except WorkloadError as exc:
            listed.append(Listed(name, source, None, str(exc)))
        else:
            listed.append(Listed(workload.name, source, workload))
    return listed


def _checked(workload: object, spec: str) -> Workload:
    if not isinstance(workload, Workload):
        kind = type(workload).__name__
        article = "an" if kind[:1].lower() in "aeiou" else "a"
        raise WorkloadError(f"{spec}: `workload` is {article} {kind}, not a dbladder Workload")
    if not workload.source:
        workload.source = spec
    return workload.checked()


def _from_attribute(target: str, source: str) -> Workload:
    module_name, _, attribute = target.partition(":")
    attribute = attribute or "workload"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise WorkloadError(f"{source}: cannot import {module_name}: {exc}") from None
    except Exception as exc:
        raise WorkloadError(f"{source}: importing {module_name} failed: {_where(exc)}") from None
    try:
        workload = getattr(module, attribute)
    except AttributeError:
        raise WorkloadError(f"{source}: the module {module_name} has no attribute {attribute!r}") from None
    if isinstance(workload, Workload) and not workload.source:
        workload.source = source
    return workload  # type: ignore[no-any-return]


def run_user_file(path: Path, what: str, error: type[UsageError], prefix: str) -> ModuleType:
    """A user's Python file run as a module of its own (`prefix` and a hash of its path, so two
    user files of one name do not collide); `error` naming the file and what went wrong
    otherwise: `what` is missing, a syntax error's line, or what the code raised and where."""
    if not path.is_file():
        raise error(f"{path}: no such {what}")
    name = f"{prefix}_{abs(hash(str(path.resolve()))):x}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise error(f"{path}: cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise error(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:  # the user's code: whatever it raised is the message
        raise error(f"{path}: loading it failed: {_where(exc, path)}") from None
    return module


def _from_file(path: Path) -> Workload:
    module = run_user_file(path, "workload file", WorkloadError, "dbladder_user_workload")
    workload = getattr(module, "workload", None)
    if workload is None:
        raise WorkloadError(
            f"{path}: the file defines no `workload`; end it with `workload = App(...)` "
            '(the README\'s section "Your own app" shows a complete one)'
        )
    if isinstance(workload, Workload) and not workload.source:
        workload.source = str(path)
    return workload  # type: ignore[no-any-return]


def _where(exc: BaseException, path: Path | None = None) -> str:
    """An exception as one line, with the line of the user's file it came from when there is one."""
    frames = traceback.extract_tb(exc.__traceback__)
    if path is not None:
        mine = [frame for frame in frames if Path(frame.filename).resolve() == path.resolve()]
        if mine:
            return f"line {mine[-1].lineno}: {type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc}"
