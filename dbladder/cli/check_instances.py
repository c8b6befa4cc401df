"""`dbladder check-instances`: does an order created through one instance show through another?"""

from __future__ import annotations

import json

import click

from ..errors import InstancesDisagree, UsageError
from ..service.consistency import InstanceCheck, compare_instances
from ..service.consistency import check_instances as run_check
from .database_options import db_texts


def _report(check: InstanceCheck) -> str:
    return "\n".join(
        [
            f"order {check.order_id} created through {check.first}",
            f"  GET /orders/{check.order_id} through {check.first}: {check.status_first}",
            f"  GET /orders/{check.order_id} through {check.second}: {check.status_second}",
            check.explain(),
        ]
    )


@click.command("check-instances")
@click.option(
    "--db",
    "db_urls",
    multiple=True,
    metavar="URL|@FILE",
    help="Database URL; once: two instances share it; twice: one instance on each.",
)
@click.option(
    "--service",
    "services",
    multiple=True,
    metavar="URL",
    help="Instead of --db: two running services to compare, e.g. http://127.0.0.1:9001 (give it twice).",
)
@click.option("--workers", default=1, show_default=True, type=int, help="Worker processes per instance.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def check_instances(db_urls: tuple[str, ...], services: tuple[str, ...], workers: int, as_json: bool) -> None:
    """Create an order through one instance and read it through another (exit 1 if they disagree)."""
    if services and db_urls:
        raise UsageError(
            "give either --db (instances are started) or --service (running instances), not both"
        )
    if services:
        if len(services) != 2:
            raise UsageError(f"--service takes two running services, got {len(services)}")
        check = compare_instances(services[0], services[1])
    else:
        if not 1 <= len(db_urls) <= 2:
            raise UsageError("give --db once (shared database) or twice (one database per instance)")
        check = run_check(db_texts(db_urls), workers=workers)
    click.echo(json.dumps(check.to_dict(), indent=2) if as_json else _report(check))
    if not check.consistent:
        raise InstancesDisagree(check.explain())
