"""The chatty ORM app of "PostgreSQL vs SQLite, 2026 edition": a small compliance app on SQLAlchemy 2.

Users, controls, assets, assessments, findings and per-object grants (`data.py`), mapped with the
ORM in its ordinary style (`models.py`), and five endpoints written as an app writes them
(`endpoints.py`): a list whose lazy loads and per-row permission checks make the N+1, a bounded
lookup by key, an aggregate dashboard, and two writes. Each request's statements and round trips
are counted, not estimated (`context.py`), and every run reports them per operation and level.
The ORM reaches each engine through its own driver, not through dbladder's engine; `data_layer`
says which, so a result is honest about it (docs/orm.md has the choice and its measurements).

Its rounds (`presets.py`) are the post's Locust run on the populated and the empty data set, and
open ladders; the routes and generated requests are in `operations.py`, the integrity check in
`verify.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...engines.base import Engine, Row, Table
from ...engines.dialect import dialect_of, package_version
from ..base import DataSpec, Sizes, Workload, WorkloadError
from . import data, verify
from .operations import OPERATIONS
from .presets import PRESETS

if TYPE_CHECKING:
    from .context import OrmContext

__all__ = ["Orm", "workload"]


class Orm(Workload):
    name = "orm"
    description = (
        "a compliance app on SQLAlchemy 2: N+1 lists with per-object permission checks, bounded "
        "lookups, a dashboard, writes; queries per request counted"
    )
    schema = data.SCHEMA
    sizes = MappingProxyType(dict(data.POPULATED))
    operations = OPERATIONS
    presets = PRESETS
    default_preset = "ciso"
    source = "built-in"

    def generate(self, spec: DataSpec) -> Iterator[tuple[Table, Iterator[list[Row]]]]:
        return data.generate(spec.seed, spec.sizes)

    def planned_rows(self, sizes: Sizes) -> dict[str, int]:
        return data.planned_rows(sizes)

    def scaled_sizes(self, scale: float = 1.0, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
        """The populated data set with assets, assessments and findings times `scale` (the accounts
        and the control catalogue stay as they are), with `overrides` set as given."""
        sizes = data.scaled_sizes(scale)
        sizes.update(overrides or {})
        return sizes

    def validate_sizes(self, sizes: Sizes) -> list[str]:
        problems = [
            f"size {name} must be a whole number, not {value!r}"
            for name, value in sizes.items()
            if not isinstance(value, int) or isinstance(value, bool)
        ]
        return problems or data.validate_sizes(sizes)

    async def sizes_in(self, engine: Engine) -> dict[str, int]:
        return await verify.sizes_in(engine)

    async def open(self, engine: Engine) -> OrmContext:
        """The ORM's own engine for the same database, with the same pool size and timeouts.

        SQLAlchemy is imported here, not with the workload: the load generator never needs it.
        """
        from .context import open_context

        return await open_context(engine.url, engine.options)

    async def close(self, context: Any) -> None:
        await context.close()

    def query_counts(self, context: Any) -> dict[str, dict[str, int]]:
        return context.query_counts()  # type: ignore[no-any-return]

    def data_layer(self, engine: str) -> dict[str, str]:
        return data_layer(engine)

    async def check_sql(self, engine: Engine) -> None:
        """Every mapped class read through the ORM (LIMIT 0) on this engine: the tables the models
        name exist with the columns they name. The ORM writes its own SQL, so there is no list of
        statements to prepare beforehand."""
        from sqlalchemy import select

        from .models import Base

        context = await self.open(engine)
        try:
            for mapper in Base.registry.mappers:
                model = mapper.class_
                await context.run("check", lambda session, m=model: session.scalars(select(m).limit(0)).all())
        except Exception as exc:
            raise WorkloadError(
                f"the orm workload's models do not match the tables in {engine.url.redacted}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            ) from None
        finally:
            await context.close()

    async def verify(
        self,
        engine: Engine,
        data: DataSpec,
        acknowledged: Mapping[str, Sequence[tuple[Any, ...]]],
        before: Any = None,
    ) -> dict[str, Any]:
        return await verify.verify(engine, data.sizes, acknowledged)


def data_layer(engine: str) -> dict[str, str]:
    """The ORM and driver each engine is reached through, with what differs from dbladder's engines."""
    return {"orm": f"SQLAlchemy {package_version('sqlalchemy')}"} | dialect_of(engine).orm_data_layer()


workload = Orm()
