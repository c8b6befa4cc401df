"""A typed piece of a result document that reads itself from JSON and writes itself back unchanged.

Every part of `result.json` (the run, a level, the engine, the integrity check...) is a frozen
dataclass over `Part`. Its fields are the document's keys (a field's name is its key); its type
hints say how a value is read: another Part, a tuple of them (a JSON array), a `Mapping[str, P]`
of them (an object keyed by name), or a plain value kept as it is (a number stays the int or
float it was, so a figure is never re-spelt). A field made with `spread` is a mapping whose
entries are keys of the part itself, each one a key the field names (the engines' run settings,
"sqlite_writers", which result.json has always kept among the config's own keys).

`to_json(from_json(doc)) == doc` holds for any document the schema accepts, also an older or a
newer one, because a part remembers how its document was written (`AsRead`): the order of its
keys, so a key that was absent stays absent and one that was null stays null, and the keys it
does not declare. Those are kept as they were read and written back, never read: the schema
allows them (its objects have `additionalProperties`, so a newer release may add a key without a
new schema version, `schema.py`), and where it does not, the document fails its check when its
bundle is loaded (`documents.check_document`), before any part reads it. Code reads a part's
typed fields only; nothing outside this module looks into its layout.

A part built in code has no layout: it writes its fields in the order they are declared, leaving
out an optional field (one with a default of None) while it is None, and writing a field without
a default even when it is None (the schema's required keys). A key absent when read is written
once it is given a value other than its default. `updated` sets keys from JSON data, the way a
run fills its result level by level; a key the part does not declare is a mistake in the code
that gives it (`UndeclaredKey`). Two parts are equal when their typed fields are, however their
documents were written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Self

_SPREAD = "dbladder.part.spread"
"""The metadata key of a `spread` field: the function that gives the keys it holds."""


def spread(keys: Callable[[], Iterable[str]]) -> Any:
    """A field holding a mapping whose entries are keys of the part itself, not an object under
    the field's name: `keys()` names the keys it holds (asked when a document is read, so they may
    come from the installed packages). It reads as {} when the document has none of them."""
    return dataclasses.field(default_factory=dict, metadata={_SPREAD: keys})


class UndeclaredKey(TypeError):
    """A key given to a part in code (`Part.updated`) that the part does not declare."""


@dataclasses.dataclass(frozen=True)
class AsRead:
    """How a part's document was written when it was read: its keys in their order, and the values
    of those the part does not declare (a newer release's), written back as they were."""

    keys: tuple[str, ...]
    undeclared: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Part:
    """A typed piece of a result document (see the module's docstring)."""

    layout: AsRead | None = dataclasses.field(default=None, repr=False, compare=False)
    """How the document was written when read; None for a part built in code."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The part as typed values; a declared key that is absent reads as its default (None when it
        has none), one the part does not declare is kept in its layout to be written back."""
        known = _fields(cls)
        values: dict[str, Any] = {}
        taken: set[str] = set()
        for name, field in known.items():
            if field.spread is not None:
                keys = set(field.spread())
                values[name] = {key: value for key, value in data.items() if key in keys}
                taken |= keys
            elif name in data:
                values[name] = _decode(field.hint, data[name])
            elif field.default is dataclasses.MISSING:
                values[name] = None
        taken |= {name for name, field in known.items() if field.spread is None}
        undeclared = {key: value for key, value in data.items() if key not in taken}
        return cls(**values, layout=AsRead(tuple(data), undeclared))

    def updated(self, values: Mapping[str, Any]) -> Self:
        """The part with `values` set, each given as JSON data or already typed: a declared key
        becomes its field (a key of a `spread` field, its entry); a key new to a part that was read
        goes after the keys it had, so the document keeps the order it was filled in. UndeclaredKey
        for a key the part does not declare."""
        known = _fields(type(self))
        typed: dict[str, Any] = {}
        added: list[str] = []
        for key, value in values.items():
            if key in known and known[key].spread is None:
                typed[key] = _decode(known[key].hint, value)
                added.append(key)
                continue
            owner = key if key in known else _spread_owner(known, key)
            if owner is None:
                raise UndeclaredKey(f"{type(self).__name__} has no key {key!r}")
            if owner == key:  # the whole mapping
                typed[owner] = dict(value)
                added += value
            else:
                typed[owner] = {**typed.get(owner, getattr(self, owner)), key: value}
                added.append(key)
        layout = self.layout
        if layout is not None:
            new = tuple(dict.fromkeys(key for key in added if key not in layout.keys))
            layout = AsRead(layout.keys + new, layout.undeclared)
        return dataclasses.replace(self, **typed, layout=layout)

    def to_json(self) -> dict[str, Any]:
        """The part as JSON data: in the order it was read (or declared), its undeclared keys kept."""
        known = _fields(type(self))
        layout = self.layout
        undeclared = layout.undeclared if layout is not None else {}
        spread_values = {
            key: value
            for name, field in known.items()
            if field.spread is not None
            for key, value in getattr(self, name).items()
        }
        out: dict[str, Any] = {}
        for key in layout.keys if layout is not None else ():
            if key in known and known[key].spread is None:
                out[key] = _encode(getattr(self, key))
            elif key in spread_values:
                out[key] = spread_values[key]
            elif key in undeclared:
                out[key] = undeclared[key]
        for name, field in known.items():
            value = getattr(self, name)
            if field.spread is not None:
                out.update({key: entry for key, entry in value.items() if key not in out})
                continue
            if name in out:
                continue
            if layout is not None:
                # Absent when read: written only once it holds something other than what it read as.
                if value is None or value == field.default:
                    continue
            elif value is None and field.default is not dataclasses.MISSING:
                continue
            out[name] = _encode(value)
        return out


class _Field(NamedTuple):
    hint: Any
    default: Any
    spread: Callable[[], Iterable[str]] | None  # a `spread` field's keys


_FIELDS: dict[type, dict[str, _Field]] = {}
"""Each Part class's fields, worked out once (a cache: classes do not change)."""


def _fields(cls: type) -> dict[str, _Field]:
    """A part's fields as document keys (a `spread` field stands for the keys it holds), by name;
    `layout` left out."""
    if cls in _FIELDS:
        return _FIELDS[cls]
    hints = typing.get_type_hints(cls)
    found = {}
    for field in dataclasses.fields(cls):
        if field.name == "layout":
            continue
        default = field.default
        if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        found[field.name] = _Field(hints[field.name], default, field.metadata.get(_SPREAD))
    _FIELDS[cls] = found
    return found


def _spread_owner(known: Mapping[str, _Field], key: str) -> str | None:
    """The `spread` field that holds `key`, if any."""
    for name, field in known.items():
        if field.spread is not None and key in set(field.spread()):
            return name
    return None


def document_keys(cls: type[Part]) -> dict[str, str]:
    """Every key a part's document may hold that the part declares, with the field that holds it:
    a field's own name, or each key a `spread` field names."""
    keys = {}
    for name, field in _fields(cls).items():
        if field.spread is None:
            keys[name] = name
        else:
            keys.update(dict.fromkeys(field.spread(), name))
    return keys


def _is_part(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, Part)


def _decode(hint: Any, value: Any) -> Any:
    """`value` as `hint` says: a Part, a tuple of them, a mapping of them, or as it is."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        wanted = dict if isinstance(value, Mapping) else list if isinstance(value, list | tuple) else None
        for option in options:
            shape = typing.get_origin(option) or option
            if (_is_part(option) or shape in (Mapping, dict)) and wanted is dict:
                return _decode(option, value)
            if shape is tuple and wanted is list:
                return _decode(option, value)
        return value
    if _is_part(hint):
        return hint.from_json(value) if isinstance(value, Mapping) else value
    # A document read from JSON has lists; one still in memory (as the round fills it) may hold
    # the tuples a plan's asdict() gave.
    if origin is tuple and isinstance(value, list | tuple):
        item = typing.get_args(hint)[0]
        return tuple(_decode(item, element) for element in value)
    if origin in (Mapping, dict) and isinstance(value, Mapping):
        item = typing.get_args(hint)[1]
        if _is_part(item) or typing.get_origin(item) is not None:
            return {key: _decode(item, element) for key, element in value.items()}
    return value


def _encode(value: Any) -> Any:
    """A typed value back as JSON data."""
    if isinstance(value, Part):
        return value.to_json()
    if isinstance(value, tuple):
        return [_encode(element) for element in value]
    if isinstance(value, Mapping):
        return {key: _encode(element) for key, element in value.items()}
    return value
