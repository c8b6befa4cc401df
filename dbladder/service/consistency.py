"""The two-instance check ("Postgres vs SQLite under load", "Where SQLite stops being an option").

Create an order through one instance of the service and read it back through another. Two
instances on one shared PostgreSQL or MariaDB database agree (200, the same order); two
instances that each have their own SQLite file do not (404, or worse, someone else's order under
that id). `compare_instances` checks two services that are already running; `check_instances`
starts them itself on free loopback ports, one per database URL given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import InvalidConfig, ServiceFailed
from .config import ServiceConfig
from .server import DecodedAnswer, http_request, running_service

# The order of the demonstration in "Postgres vs SQLite under load": one unit of product 1 for customer 1.
DEFAULT_ORDER: dict[str, Any] = {"customer_id": 1, "items": [{"product_id": 1, "qty": 1}]}


@dataclass(frozen=True)
class InstanceCheck:
    """What each instance answered for one order created through the first."""

    first: str  # base URL of the instance that created the order
    second: str
    order_id: int
    status_first: int  # GET /orders/{id} through the first instance
    status_second: int  # ... and through the second
    same_order: bool  # the second answered 200 with exactly the order the first shows

    @property
    def consistent(self) -> bool:
        """True when the second instance sees the order the first one created."""
        return self.status_first == 200 and self.status_second == 200 and self.same_order

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "consistent": self.consistent}

    def explain(self) -> str:
        """One sentence on what the answers mean."""
        if self.consistent:
            return "the instances share their data: an order created through one is read through the other"
        if self.status_second == 404:
            return (
                "the instances do NOT share their data: an order created through one is missing through "
                "the other (each has its own database)"
            )
        if self.status_second == 200:
            return (
                "the instances do NOT share their data: "
                "the other instance has a different order under that id"
            )
        return f"the second instance answered {self.status_second}, so the check could not tell"


def _address(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname or not parts.port:
        raise InvalidConfig([f"a service URL must look like http://127.0.0.1:8000, not {base_url!r}"])
    return parts.hostname, parts.port


def _call(base_url: str, method: str, path: str, body: Any = None) -> DecodedAnswer:
    host, port = _address(base_url)
    try:
        return http_request(host, port, method, path, body)
    except OSError as exc:
        raise ServiceFailed(f"{method} {base_url}{path} failed: {exc}") from None


def compare_instances(first: str, second: str, order: dict[str, Any] | None = None) -> InstanceCheck:
    """Create `order` through `first`, then read it through both (base URLs of running services)."""
    created = _call(first, "POST", "/orders", order or DEFAULT_ORDER)
    if created.status != 201:
        raise ServiceFailed(f"POST {first}/orders answered {created.status}: {created.body}")
    order_id = int(created.body["id"])
    via_first = _call(first, "GET", f"/orders/{order_id}")
    via_second = _call(second, "GET", f"/orders/{order_id}")
    return InstanceCheck(
        first=first,
        second=second,
        order_id=order_id,
        status_first=via_first.status,
        status_second=via_second.status,
        same_order=via_second.status == 200 and via_second.body == via_first.body,
    )


def check_instances(
    db_urls: Sequence[str],
    *,
    workers: int = 1,
    pool_size: int | None = None,
    order: dict[str, Any] | None = None,
) -> InstanceCheck:
    """Start two services on free loopback ports and compare them.

    One URL: both instances use that database (a server database is shared; so is a SQLite file
    on one host). Two URLs: one instance on each, e.g. two SQLite files, as two hosts would have.
    """
    if not 1 <= len(db_urls) <= 2:
        raise InvalidConfig([f"give one or two database URLs, not {len(db_urls)}"])
    first_url, second_url = db_urls[0], db_urls[-1]
    options: dict[str, Any] = {"port": 0, "workers": workers}
    if pool_size is not None:
        options["pool_size"] = pool_size
    with (
        running_service(ServiceConfig(first_url, **options)) as first,
        running_service(ServiceConfig(second_url, **options)) as second,
    ):
        return compare_instances(first.url, second.url, order)
