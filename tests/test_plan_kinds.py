"""Plans answer for themselves: nothing outside `plans/` asks which kind of plan it holds.

A ladder, a ceiling search and a users plan differ in their words, columns, headline and plots, and
each says them itself (`dbladder.report.plan_views.view_of` gives a finished run's plan view, from
its result.json alone). Every module outside `plans/` and the plans' views (`report/plan_views/`) is
read with `ast`, and asking a plan its kind is a finding: a comparison with a plan's name ("ladder",
"search", "users": `kind == "search"`, `"search" in result`, a match case), `isinstance` with a plan
class, or the flags that told them apart (`plan_kind`, `closed`, `searched`). What differs between
plans belongs behind the plan's view (`dbladder/report/plan_views/`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from source_support import ROOT, module_paths, nodes_of, source_of

PLAN_NAMES = {"ladder", "search", "users"}
"""The plans' kinds (`Plan.kind`), as a result's config block keys them."""
PLAN_CLASSES = {"Ladder", "UserPlan", "Search", "PlanView", "SearchView", "UsersView"}
KIND_FLAGS = {"plan_kind", "closed", "searched"}
"""The flags the reports once asked: which plan a result followed, the closed model, a search."""
EXEMPT = ("plans/", "report/plan_views/")
ALLOWED = {
    ("result/level_rows.py", 'if "users" in snapshot:'): (
        "a level's snapshot carries its own users count: the level's data, read into its row"
    ),
    ("service/stats.py", "if self._offset >= 0 and not self._map.closed:"): "a memory map's `closed`",
}
"""(module, the line's code) -> why it is no plan's kind; each is checked to still be there."""


def _names(node: ast.AST) -> bool:
    """Whether `node` is a plan's name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in PLAN_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names(element) for element in node.elts)
    return False


def _asks_for_a_kind(node: ast.AST) -> bool:
    """Whether `node` compares with a plan's name, checks a plan's class, or reads a kind flag."""
    if isinstance(node, ast.Compare):
        return any(_names(n) for n in (node.left, *node.comparators))
    if isinstance(node, ast.MatchValue):
        return _names(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
        classes = node.args[1] if len(node.args) > 1 else None
        found = classes.elts if isinstance(classes, ast.Tuple) else [classes]
        return any(
            (isinstance(c, ast.Name) and c.id in PLAN_CLASSES)
            or (isinstance(c, ast.Attribute) and c.attr in PLAN_CLASSES)
            for c in found
        )
    if isinstance(node, ast.Attribute):
        return node.attr in KIND_FLAGS
    return False


def findings(source: str) -> list[int]:
    """The line of every question about a plan's kind in `source`."""
    return findings_among(ast.walk(ast.parse(source)))


def findings_among(nodes: Iterable[ast.AST]) -> list[int]:
    return sorted({node.lineno for node in nodes if _asks_for_a_kind(node)})


@functools.cache  # both tests read the same tree: parse it once
def every_finding() -> frozenset[tuple[str, str]]:
    """(module, the line's code) of every question about a plan's kind outside the plans."""
    found = set()
    for path in module_paths():
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(EXEMPT):
            lines = source_of(path).splitlines()
            # The line's code without its comment: the allowed entries name it.
            lines_found = findings_among(nodes_of(path))
            found |= {(relative, lines[line - 1].split("  #")[0].strip()) for line in lines_found}
    return frozenset(found)


def test_no_plan_is_asked_its_kind_outside_the_plans():
    found = every_finding()
    assert sorted(found - set(ALLOWED)) == [], (
        "ask the plan's view (dbladder.report.plan_views.view_of) instead"
    )


def test_every_allowed_question_is_still_there():
    # When one goes, take it off the list, so the list says only what is true.
    assert set(ALLOWED) - every_finding() == set()


def test_the_check_sees_every_form_of_the_question():
    source = """
if result.plan_kind == "users": pass
if "search" in result: pass
if config.kind in ("ladder", "search"): pass
if run.closed or run.searched: pass
if isinstance(plan, Ladder): pass
if isinstance(plan, (plans.Search, int)): pass
match kind:
    case "users": pass
fine = view_of(result).x_column and plan.model == "closed" and sizes["users"]
"""
    assert findings(source) == [2, 3, 4, 5, 6, 7, 9]
