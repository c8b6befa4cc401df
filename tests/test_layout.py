"""The package map of docs/design.md, checked: no package imports one it may not.

Every module's imports are read with `ast` (also those under `if TYPE_CHECKING:` and inside
functions), resolved to dbladder modules, and each import from one package into another is held
against ALLOWED. KNOWN_BREAKS lists, module by module, the imports that break the one-way flow
today, each with what it would take to mend it; the test also fails when one of them has gone, so
the list only ever shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from source_support import ROOT, imports_of, module_name, module_paths, nodes_of, tree_of

LEAVES = {
    "dbladder",
    "errors",
    "types",
    "engine_registry",
    "urls",
    "histogram",
    "plans",
    "outcomes",
    "formats",
}
"""Shared leaves any package may import: the package root (its version), errors, the shared type
aliases, the engines dbladder knows (their registrations, read from an entry point group), URLs, the
histogram, the plans (ladders, users, presets: pure data that workloads, load,
run and reports share; each plan's view, which the reports ask, is report/'s), the outcome names a request
can end with (which the recorder writes and the result reads), and the number formats the reports
and the plans' views write figures in."""

ALLOWED: dict[str, set[str]] = {
    "dbladder": set(),
    "__main__": {"cli"},  # `python -m dbladder` runs the command
    "errors": set(),
    "types": set(),
    "histogram": set(),
    "outcomes": set(),
    "formats": set(),
    "plans": {"errors", "formats"},
    "engine_registry": {"errors"},
    "urls": {"errors", "engine_registry"},
    "engines": LEAVES,
    "workloads": LEAVES | {"engines"},
    "data": LEAVES | {"engines", "workloads"},
    "service": LEAVES | {"engines", "workloads"},
    "app": LEAVES | {"engines", "service", "workloads", "load"},
    "observe": LEAVES | {"engines", "service"},
    "load": LEAVES | {"engines", "workloads"},
    "result": LEAVES,
    "report": LEAVES | {"result"},
    "roles": LEAVES,
    "servers": LEAVES | {"roles"},
    "transport": LEAVES | {"engines"},
    "cluster": LEAVES | {"load", "observe"},  # the agents run the load's fleet and sample their host
    "bench": LEAVES | {"engines", "workloads", "data", "result", "report", "roles", "servers"},
    "run": LEAVES
    | {
        "engines",
        "workloads",
        "data",
        "service",
        "app",
        "observe",
        "load",
        "result",
        "report",
        "servers",
        "transport",
        "roles",
        "cluster",
    },
    "dashboard": LEAVES | {"load", "result", "report"},
    "cli": LEAVES
    | {
        "dashboard",
        "engines",
        "workloads",
        "data",
        "service",
        "observe",
        "load",
        "result",
        "report",
        "run",
        "app",
        "servers",
        "transport",
        "bench",
        "roles",
        "cluster",
    },
}
"""Package -> the packages it may import besides itself (a module directly in dbladder/ is a package)."""

KNOWN_BREAKS: dict[tuple[str, str], str] = {}
"""(importing module, imported module) -> why it breaks the flow and how it would be mended."""


def package_of(module: str) -> str:
    """The map's unit of a module: its first level under dbladder (dbladder.load.fleet -> load)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "dbladder"


def cross_imports() -> set[tuple[str, str]]:
    """Every (importing module, imported module) pair whose packages differ."""
    pairs = set()
    for path in module_paths():
        source = module_name(path)
        for target in imports_of(path):
            if package_of(source) != package_of(target):
                pairs.add((source, target))
    return pairs


def test_every_package_is_on_the_map() -> None:
    packages = {package_of(module_name(path)) for path in module_paths()}
    assert packages - set(ALLOWED) == set(), "a new package needs its line in ALLOWED and in docs/design.md"


def test_no_package_imports_one_it_may_not() -> None:
    wrong = sorted(
        f"{source} imports {target}"
        for source, target in cross_imports()
        if package_of(target) not in ALLOWED[package_of(source)] and (source, target) not in KNOWN_BREAKS
    )
    assert wrong == []


def test_every_known_break_is_still_there() -> None:
    # When one is mended, take it off the list, so the list keeps saying what is left to do.
    assert set(KNOWN_BREAKS) - cross_imports() == set()


def test_the_check_sees_relative_and_type_checking_imports() -> None:
    imports = imports_of(ROOT / "load" / "executors" / "open.py")
    assert {"dbladder.load.executors", "dbladder.plans", "dbladder.load.targets"} <= imports
    # Under `if TYPE_CHECKING:` only, and still an import of the mix.
    assert "dbladder.load.mix" in imports_of(ROOT / "load" / "targets" / "http.py")
    # `from ..engines import create_engine` is the engines package, not a module named create_engine.
    assert "dbladder.engines" in imports_of(ROOT / "load" / "fleet" / "child.py")


def test_nothing_outside_a_workload_imports_it() -> None:
    # The workload interface is the seam: the registry names built-in workloads by text, and every
    # other package sees a workload only through dbladder.workloads.base.
    workloads = ROOT / "workloads"
    packages = {f"dbladder.workloads.{p.name}" for p in workloads.iterdir() if (p / "__init__.py").exists()}
    wrong = sorted(
        f"{source} imports {target}"
        for path in module_paths()
        for source in [module_name(path)]
        for target in imports_of(path)
        for package in packages
        if (target == package or target.startswith(package + ".")) and not source.startswith(package)
    )
    assert packages, "no workload package found"
    assert wrong == []


def test_the_design_notes_map_every_package() -> None:
    # docs/design.md's package table is the map a newcomer reads: one row per package or leaf.
    text = (ROOT.parent / "docs" / "design.md").read_text(encoding="utf-8")
    rows = {match.group(1) for match in re.finditer(r"^\| `([a-z_]+)(?:/|\.py)` \|", text, re.M)}
    packages = {package_of(module_name(path)) for path in module_paths()} - {"dbladder"}
    assert packages - rows == set(), "packages missing from the map in docs/design.md"
    assert rows - packages == set(), "the map in docs/design.md names packages that do not exist"


def test_no_two_modules_import_each_other() -> None:
    # A pair that imports each other (even inside a function) is one module in two files: the shared
    # piece belongs on one side or in a third module (bench/statements.py for the bench rounds).
    imports = {module_name(path): imports_of(path) for path in module_paths()}
    both_ways = sorted(
        f"{one} <-> {other}"
        for one in imports
        for other in imports[one]
        if other > one and one in imports.get(other, ())
    )
    assert both_ways == []


MAX_LINES = 500
"""No module of dbladder is longer (issue 21): around 400 is the house style's smell."""


def test_no_module_is_over_the_line_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in ROOT.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


KEYED_READS_ALLOWED: dict[tuple[str, str], str] = {
    (
        "report/bundle.py",
        "run_index",
    ): "a row of timeseries.csv (the sampler's per-second samples), not the result",
}
"""(module under dbladder/, key) -> why reading that key in report/ is not a read of a result."""


def keyed_reads(tree: ast.AST) -> list[tuple[int, str, str]]:
    """Every read of a mapping by a string written in the code, as (line, key, the expression):
    `x["key"]` (a load or a delete, not a store into a dict the module builds), `x.get("key")`,
    `x.pop("key")`, `x.setdefault("key")`, and any use of a typed part's `.layout` (how its
    document was written, with the keys its typed fields do not name)."""
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Store):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                key = node.slice.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            first = node.args[0] if node.args else None
            if node.func.attr in ("get", "pop", "setdefault") and isinstance(first, ast.Constant):
                key = first.value if isinstance(first.value, str) else None
        elif isinstance(node, ast.Attribute) and node.attr == "layout":
            key = ".layout"
        if key is not None:
            found.append((node.lineno, key, ast.unparse(node)))
    return found


def test_the_reports_read_the_result_by_attribute_only() -> None:
    # Issue 33: a report reads the typed result (`result.run.RunResult` and its parts), so a field
    # renamed or retyped is found by mypy, not by a report that prints "-". The documents are read by
    # key once, in result/ (`result.documents`, `part.Part.from_json`); a level's machine figures too
    # (`result.machine`: where each of the sampler's figures lives, in either spelling).
    wrong = [
        f"{where}:{line}: {text}"
        for path in module_paths()
        if (where := str(path.relative_to(ROOT))).startswith("report/")
        for line, key, text in keyed_reads(tree_of(path))
        if (where, key) not in KEYED_READS_ALLOWED
    ]
    assert wrong == []


def test_the_keyed_read_check_sees_each_spelling() -> None:
    source = 'a["k"]; b.get("k", 0); c.pop("k"); d.layout; e["k"] = 1; f[0]; g.get(name)'
    assert [key for _, key, _ in keyed_reads(ast.parse(source))] == ["k", "k", "k", ".layout"]


CLASS_NAMES_TWICE: dict[str, str] = {}
"""Public class name -> why it is defined in more than one module (none today: issue 33 renamed the
sixteen that were, e.g. the typed result's `EngineAsRun` beside the engines' `Engine`)."""


def test_no_public_class_name_is_defined_twice() -> None:
    # One name, one meaning: a reader (or an import) never has to ask which `Level` this is.
    where: dict[str, list[str]] = {}
    for path in module_paths():
        for node in ast.walk(tree_of(path)):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert {name: places for name, places in twice.items() if name not in CLASS_NAMES_TWICE} == {}
    assert set(CLASS_NAMES_TWICE) - set(twice) == set(), (
        "a name no longer defined twice: take it off the list"
    )


MAX_RUN_FUNCTION_LINES = 80
"""No function in dbladder/run/ is longer (issue 33): the round's middle stays a chain of steps."""


def run_modules() -> list[Path]:
    return [path for path in module_paths() if path.parent == ROOT / "run"]


def functions_of(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in nodes_of(path) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_no_function_in_run_is_over_80_lines() -> None:
    long = {
        f"{module_name(path)}.{function.name}": lines
        for path in run_modules()
        for function in functions_of(path)
        if (lines := (function.end_lineno or function.lineno) - function.lineno + 1) > MAX_RUN_FUNCTION_LINES
    }
    assert long == {}


CHOOSERS = {
    ("dbladder.run.place", "place_for"),
    ("dbladder.run.place", "cluster_for"),
    ("dbladder.run.place", "data_cluster_for"),
    ("dbladder.run.targets", "target_for"),
}
"""The functions that make the round's two choices, once: where the load runs and the data lives
(this machine or a cluster's agents), and what the load is sent to (the user's app among others)."""

SETTINGS = "dbladder.run.config"
"""The run's settings: their own checks say which settings go together (--tls with --cluster,
--requests with --app) and their JSON writes each one; they choose nothing for the round."""


def presence_tested(test: ast.expr) -> set[str]:
    """What `test` asks the presence of, among the cluster (`cluster`, `x.cluster`) and the user's
    app (`x.app`): `X is None`, `X is not None`, `X` or `not X`, alone or in an and/or."""
    if isinstance(test, ast.BoolOp):
        return set().union(*(presence_tested(value) for value in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return presence_tested(test.operand)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is | ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        test = test.left
    if isinstance(test, ast.Name) and test.id == "cluster":
        return {"cluster"}
    if isinstance(test, ast.Attribute) and test.attr in ("cluster", "app"):
        return {f".{test.attr}"}
    return set()


def test_no_run_module_branches_on_the_cluster_or_the_app() -> None:
    # The round asks its place and its target (run/place.py, run/targets.py); only their choosers
    # ask which one the config names.
    found = []
    for path in run_modules():
        module = module_name(path)
        if module == SETTINGS:
            continue
        for function in functions_of(path):
            if (module, function.name) in CHOOSERS:
                continue
            for node in ast.walk(function):
                tests: list[ast.expr] = []
                if isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
                    tests = [node.test]
                elif isinstance(node, ast.comprehension):
                    tests = list(node.ifs)
                for test in tests:
                    if asked := presence_tested(test):
                        found.append(f"{module}.{function.name}:{node.lineno} {sorted(asked)}")
    assert sorted(set(found)) == []


def test_the_branch_check_sees_a_branch_on_the_cluster_and_the_app() -> None:
    def asked(source: str) -> set[str]:
        return presence_tested(ast.parse(source, mode="eval").body)

    assert asked("cluster is not None") == {"cluster"}
    assert asked("config.app is None or x") == {".app"}
    assert asked("not self.config.cluster") == {".cluster"}
    assert asked("cluster.app_agent() is None") == set()  # a question to the cluster, not about it


def takes_the_cluster(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    return any(
        argument.arg == "cluster"
        or (argument.annotation is not None and "Cluster" in ast.unparse(argument.annotation).split(" | "))
        for argument in arguments
    )


def test_no_any_in_a_signature_that_takes_the_cluster() -> None:
    # The cluster is a typed object (dbladder.cluster.coordinator.Cluster); what goes with it is too.
    found = []
    for path in module_paths():
        for function in functions_of(path):
            if not takes_the_cluster(function):
                continue
            arguments = function.args
            annotations = [
                argument.annotation
                for argument in [
                    *arguments.posonlyargs,
                    *arguments.args,
                    *arguments.kwonlyargs,
                    *filter(None, [arguments.vararg, arguments.kwarg]),
                ]
            ] + [function.returns]
            if any(
                isinstance(node, ast.Name) and node.id == "Any"
                for annotation in annotations
                if annotation is not None
                for node in ast.walk(annotation)
            ):
                found.append(f"{module_name(path)}.{function.name}")
    assert found == []


MAX_PROTOCOL_METHODS = 8
"""No protocol the round asks in dbladder/run/ has more methods (issue 33: `Place` had 16, and
was split into where the data lives and where the load runs; `Target` had 10, and was split into
the round's seven steps and how a comparison makes the data, `TargetData`)."""

PROTOCOLS_OVER: dict[str, str] = {}
"""Protocol -> why it has more methods than MAX_PROTOCOL_METHODS for now (none)."""


def protocol_methods() -> dict[str, int]:
    """Every Protocol class in dbladder/run/, with its number of methods."""
    found = {}
    for path in run_modules():
        for node in nodes_of(path):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(base) == "Protocol" for base in node.bases):
                found[node.name] = sum(
                    isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body
                )
    return found


def test_no_protocol_of_the_round_has_over_8_methods() -> None:
    methods = protocol_methods()
    assert {"DataPlace", "LoadPlace", "Target", "TargetData"} <= set(methods)
    over = {name: count for name, count in methods.items() if count > MAX_PROTOCOL_METHODS}
    assert set(over) == set(PROTOCOLS_OVER), over


def test_the_cluster_keeps_its_state_to_itself() -> None:
    # Issue 33: the run reads the cluster through its methods (`offsets()`, `actor(name)`,
    # `lost_agents()`...), never an attribute it could also write: every attribute `Cluster` sets is
    # private, and what never changes once entered (`address`, `agents`) is a property.
    tree = tree_of(ROOT / "cluster" / "coordinator.py")
    cluster = next(
        node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "Cluster"
    )
    public = sorted(
        {
            target.attr
            for node in ast.walk(cluster)
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and not target.attr.startswith("_")
        }
    )
    assert public == []
    outside = sorted(
        f"{module_name(path)}:{node.lineno} {ast.unparse(node)}"
        for path in module_paths()
        if path != ROOT / "cluster" / "coordinator.py"
        for node in nodes_of(path)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute | ast.Name)
        and ast.unparse(node.value).split(".")[-1] == "cluster"
        and node.attr.startswith("_")
    )
    assert outside == []
