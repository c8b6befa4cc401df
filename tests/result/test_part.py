"""A Part reads a JSON object into typed fields and writes it back key for key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pytest

from dbladder.result.part import Part, UndeclaredKey, document_keys, spread


@dataclass(frozen=True, kw_only=True)
class Inner(Part):
    value: float = 0


@dataclass(frozen=True, kw_only=True)
class Outer(Part):
    name: str | None
    inner: Inner | None = None
    inners: tuple[Inner, ...] = ()
    by_name: Mapping[str, Inner] | None = None
    raw: Mapping[str, object] | None = None
    tags: tuple[str, ...] = ()


DOCUMENT = {
    "tags": ["a", "b"],
    "name": "x",
    "unknown": {"kept": [1, 2]},
    "inner": {"value": 3, "newer": True},
    "inners": [{"value": 1}, {"value": 2.5}],
    "by_name": {"first": {"value": 1}},
    "raw": {"any": {"thing": None}},
}


def test_fields_are_typed_and_nested_parts_read_as_parts():
    outer = Outer.from_json(DOCUMENT)
    assert outer.name == "x" and outer.tags == ("a", "b")
    # A key the part does not declare is no field of it: equal to the part built without it.
    assert outer.inner == Inner(value=3)
    assert [inner.value for inner in outer.inners] == [1, 2.5]
    assert outer.by_name is not None and outer.by_name["first"].value == 1
    assert outer.raw == {"any": {"thing": None}}


def test_a_document_comes_back_key_for_key_in_its_order_with_undeclared_keys_kept():
    outer = Outer.from_json(DOCUMENT)
    assert outer.to_json() == DOCUMENT
    assert json.dumps(outer.to_json()) == json.dumps(DOCUMENT)
    # A number keeps its spelling: 3 stays 3, not 3.0.
    assert json.dumps(outer.to_json()["inner"]) == '{"value": 3, "newer": true}'


def test_an_absent_key_stays_absent_and_a_null_one_null():
    assert Outer.from_json({"name": "x"}).to_json() == {"name": "x"}
    assert Outer.from_json({"name": None, "inner": None}).to_json() == {"name": None, "inner": None}
    # An absent key without a default reads as None.
    assert Outer.from_json({}).name is None and Outer.from_json({}).to_json() == {}


def test_a_part_built_in_code_writes_its_fields_in_order_leaving_out_optional_nones():
    built = Outer(name=None, inner=Inner(value=1))
    assert built.to_json() == {"name": None, "inner": {"value": 1}, "inners": [], "tags": []}
    assert list(built.to_json()) == ["name", "inner", "inners", "tags"]


def test_a_changed_part_writes_the_new_value_where_the_old_one_was():
    outer = replace(Outer.from_json(DOCUMENT), name="y", inner=None)
    written = outer.to_json()
    assert list(written) == list(DOCUMENT) and written["name"] == "y" and written["inner"] is None
    added = replace(Outer.from_json({"name": "x"}), tags=("t",))
    assert added.to_json() == {"name": "x", "tags": ["t"]}


def test_equal_documents_give_equal_parts_whatever_their_key_order():
    reordered = dict(reversed(list(DOCUMENT.items())))
    assert Outer.from_json(reordered) == Outer.from_json(DOCUMENT)


def test_an_undeclared_key_is_kept_where_it_was_also_in_a_changed_part():
    # A newer release's key (the schema allows them): written back in its place, after a change too.
    outer = replace(Outer.from_json(DOCUMENT), name="y")
    assert list(outer.to_json()) == list(DOCUMENT) and outer.to_json()["unknown"] == {"kept": [1, 2]}
    assert not hasattr(outer, "extra") and not hasattr(outer, "unknown")


def test_updated_refuses_a_key_the_part_does_not_declare():
    outer = Outer.from_json({"name": "x"})
    with pytest.raises(UndeclaredKey, match="Outer has no key 'newer'"):
        outer.updated({"newer": 1})
    assert outer.updated({"tags": ["t"]}).to_json() == {"name": "x", "tags": ["t"]}


def setting_keys() -> tuple[str, ...]:
    return ("a_writers", "b_writers")


@dataclass(frozen=True, kw_only=True)
class Settings(Part):
    name: str | None = None
    settings: Mapping[str, int] = spread(setting_keys)
    after: int | None = None


def test_a_spread_field_reads_its_keys_from_among_the_parts_own():
    document = {"name": "x", "b_writers": 1, "after": 2, "a_writers": 0, "other": 3}
    part = Settings.from_json(document)
    assert part.settings == {"b_writers": 1, "a_writers": 0} and part.after == 2
    assert json.dumps(part.to_json()) == json.dumps(document)
    assert Settings.from_json({"name": "x"}).settings == {}
    assert document_keys(Settings) == {
        "name": "name",
        "a_writers": "settings",
        "b_writers": "settings",
        "after": "after",
    }


def test_a_spread_field_writes_its_keys_in_its_place_and_is_set_by_key_or_whole():
    built = Settings(name="x", settings={"a_writers": 1}, after=2)
    assert list(built.to_json()) == ["name", "a_writers", "after"]
    read = Settings.from_json({"name": "x", "a_writers": 0})
    assert read.updated({"a_writers": 1}).to_json() == {"name": "x", "a_writers": 1}
    assert read.updated({"b_writers": 1}).to_json() == {"name": "x", "a_writers": 0, "b_writers": 1}
    assert read.updated({"settings": {"b_writers": 1}}).to_json() == {"name": "x", "b_writers": 1}
