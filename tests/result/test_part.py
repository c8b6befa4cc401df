"""A Part reads a JSON object into typed fields and writes it back key for key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from dbladder.result.part import Part


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
    assert outer.inner == Inner(value=3, extra={"newer": True})
    assert [inner.value for inner in outer.inners] == [1, 2.5]
    assert outer.by_name is not None and outer.by_name["first"].value == 1
    assert outer.raw == {"any": {"thing": None}}


def test_a_document_comes_back_key_for_key_in_its_order_with_unknown_keys_kept():
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
