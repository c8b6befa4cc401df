"""A typed piece of a result document that reads itself from JSON and writes itself back unchanged.

Every part of `result.json` (the run, a level, the engine, the integrity check...) is a frozen
dataclass over `Part`. Its fields are the document's keys (a field's name is its key); its type
hints say how a value is read: another Part, a tuple of them (a JSON array), a `Mapping[str, P]`
of them (an object keyed by name), or a plain value kept as it is (a number stays the int or
float it was, so a figure is never re-spelt).

Two things make `to_json(from_json(doc)) == doc` hold for any document the schema accepts, also
an older or a newer one: keys this release does not know are kept in `extra` and written back,
and the order of the keys as read (`layout`) is kept, so a key that was absent stays absent and
one that was null stays null. A part built in code has no layout: it writes its fields in the
order they are declared, leaving out an optional field (one with a default of None) while it is
None, and writing a field without a default even when it is None (the schema's required keys).
A key absent when read is written once it is given a value other than its default. `updated`
sets keys from JSON data, the way a run fills its result level by level.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Self


@dataclasses.dataclass(frozen=True, kw_only=True)
class Part:
    """A typed piece of a result document (see the module's docstring)."""

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    """Keys this release does not know, as they were read: written back by `to_json`."""
    layout: tuple[str, ...] | None = dataclasses.field(default=None, repr=False, compare=False)
    """The keys in the order they were read; None for a part built in code."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The part as typed values; a key the part does not declare goes to `extra`, a declared key
        that is absent reads as its default (None when it has none)."""
        known = _fields(cls)
        values: dict[str, Any] = {}
        for name, (hint, default) in known.items():
            if name in data:
                values[name] = _decode(hint, data[name])
            elif default is dataclasses.MISSING:
                values[name] = None
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(**values, extra=extra, layout=tuple(data))

    def updated(self, values: Mapping[str, Any]) -> Self:
        """The part with `values` set, each given as JSON data or already typed: a declared key
        becomes its field, another goes to `extra`; a key new to a part that was read goes after
        the keys it had, so the document keeps the order it was filled in."""
        known = _fields(type(self))
        typed = {key: _decode(known[key][0], value) for key, value in values.items() if key in known}
        extra = {**self.extra, **{key: value for key, value in values.items() if key not in known}}
        layout = self.layout
        if layout is not None:
            layout = layout + tuple(key for key in values if key not in layout)
        return dataclasses.replace(self, **typed, extra=extra, layout=layout)

    def to_json(self) -> dict[str, Any]:
        """The part as JSON data: in the order it was read (or declared), its unknown keys kept."""
        known = _fields(type(self))
        out: dict[str, Any] = {}
        for key in self.layout or ():
            if key in known:
                out[key] = _encode(getattr(self, key))
            elif key in self.extra:
                out[key] = self.extra[key]
        for name, (_, default) in known.items():
            value = getattr(self, name)
            if name in out:
                continue
            if self.layout is not None:
                # Absent when read: written only once it holds something other than what it read as.
                if value is None or value == default:
                    continue
            elif value is None and default is not dataclasses.MISSING:
                continue
            out[name] = _encode(value)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


_FIELDS: dict[type, dict[str, tuple[Any, Any]]] = {}
"""Each Part class's fields, worked out once (a cache: classes do not change)."""


def _fields(cls: type) -> dict[str, tuple[Any, Any]]:
    """A part's document keys: name -> (type hint, default), `extra` and `layout` left out."""
    if cls in _FIELDS:
        return _FIELDS[cls]
    hints = typing.get_type_hints(cls)
    found = {}
    for field in dataclasses.fields(cls):
        if field.name in ("extra", "layout"):
            continue
        default = field.default
        if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        found[field.name] = (hints[field.name], default)
    _FIELDS[cls] = found
    return found


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
