"""What clients may send, and the service's configuration (no server needed)."""

from __future__ import annotations

import pytest

from dbladder.errors import InvalidConfig, InvalidRequest
from dbladder.service import ServiceConfig
from dbladder.workloads.parsing import MAX_ID, parse_id
from dbladder.workloads.shop.validation import parse_new_order, parse_page_query


def test_a_valid_order_parses():
    body = b'{"customer_id": 3, "items": [{"product_id": 9, "qty": 2}, {"qty": 1, "product_id": 4}]}'
    assert parse_new_order(body) == (3, [(9, 2), (4, 1)])


@pytest.mark.parametrize(
    "body",
    [
        b"null",
        b"{}",
        b'{"customer_id": true, "items": [{"product_id": 1, "qty": 1}]}',
        b'{"customer_id": 1, "items": {}}',
    ],
)
def test_invalid_orders_raise_invalid_request(body):
    with pytest.raises(InvalidRequest):
        parse_new_order(body)


@pytest.mark.parametrize("text", ["1", "42", str(MAX_ID), "007"])
def test_ids_in_range_parse(text):
    assert parse_id(text, "id") == int(text)


@pytest.mark.parametrize("text", ["0", "-1", "+1", str(MAX_ID + 1), "1e3", " 1", "²", "", "9" * 40])
def test_ids_out_of_range_or_malformed_are_refused(text):
    with pytest.raises(InvalidRequest, match="id must be a whole number"):
        parse_id(text, "id")


def test_page_query():
    assert parse_page_query("category=cat-01") == ("cat-01", 0)
    assert parse_page_query("category=cat-01&after=0") == ("cat-01", 0)
    assert parse_page_query("after=40&category=a%20b") == ("a b", 40)
    for bad in ("", "after=1", "category=", "category=a&x=1", "category=a&after=x", "a&b&c", "category=%0a"):
        with pytest.raises(InvalidRequest):
            parse_page_query(bad)


def test_config_defaults_bind_loopback_and_validate():
    config = ServiceConfig("sqlite:///shop.db")
    assert (config.host, config.port, config.workers) == ("127.0.0.1", 8000, 1)
    assert config.checked() is config
    assert ServiceConfig.from_json(config.to_json()) == config


def test_config_reports_every_problem_at_once():
    config = ServiceConfig(
        "postgresql://u@h/db", port=70000, workers=0, pool_size=0, engine_settings={"sqlite_writers": 1}
    )
    with pytest.raises(InvalidConfig) as caught:
        config.checked()
    problems = " ".join(caught.value.problems)
    for field in ("port", "workers", "pool_size", "sqlite_writers=1 applies to SQLite only"):
        assert field in problems
    assert ServiceConfig("nope").validate()[0].startswith("db_url:")
