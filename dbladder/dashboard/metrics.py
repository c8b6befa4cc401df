"""`/metrics`: the dashboard's figures in OpenMetrics text, for a Prometheus beside the app's own.

prometheus_client writes the exposition (and its parser reads it back in the tests): a custom
collector reads the dashboard's document when scraped, so a scrape costs the run nothing between
scrapes and the figures are the ones the page shows. Per run (`run`: "run" for `dbladder run`,
"<database> run <n>" in a comparison) and operation:

    dbladder_requests_total          requests with an outcome in the levels' measured windows
    dbladder_failures_total          of them, failed (any cause the result counts)
    dbladder_level_latency_seconds   p50, p95, p99 of the level in progress so far (label quantile)

and per run: dbladder_level (the level in progress, 1 for the first; 0 between levels),
dbladder_offered_rate (its planned rate, req/s), dbladder_sent_rate and dbladder_answered_rate
(so far, req/s). Warm-ups are left out, as the result leaves them out of its figures; a counter
only grows, the finished levels' final counts taking over from their live ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CollectorRegistry, CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST, generate_latest

from .state import DashboardState

CONTENT_TYPE = CONTENT_TYPE_LATEST
QUANTILES = (("0.5", "p50_ms"), ("0.95", "p95_ms"), ("0.99", "p99_ms"))


class StateCollector:
    """A prometheus_client collector over a DashboardState."""

    def __init__(self, state: DashboardState):
        self.state = state

    def collect(self) -> Iterator[Metric]:
        document = self.state.snapshot()
        requests = CounterMetricFamily(
            "dbladder_requests", "Requests with an outcome (measured windows).", labels=["run", "operation"]
        )
        failures = CounterMetricFamily(
            "dbladder_failures", "Failed requests (measured windows).", labels=["run", "operation"]
        )
        latency = GaugeMetricFamily(
            "dbladder_level_latency_seconds",
            "Latency from the due time of the successful answers, the level in progress so far.",
            labels=["run", "operation", "quantile"],
        )
        gauges = {
            name: GaugeMetricFamily(f"dbladder_{name}", words, labels=["run"])
            for name, words in (
                ("level", "The level in progress (1 for the first; 0 between levels)."),
                ("offered_rate", "The level's planned arrival rate, requests per second."),
                ("sent_rate", "Requests due per second so far in the level (sent or dropped)."),
                ("answered_rate", "Successful answers per second so far in the level."),
            )
        }
        for run in document["runs"]:
            label = run["label"]
            for name, counts in _counts(run).items():
                requests.add_metric([label, name], counts["requests"])
                failures.add_metric([label, name], counts["failures"])
            live = run.get("live_operations") or {}
            for name, figures in (live.get("operations") or {}).items():
                for quantile, key in QUANTILES:
                    latency.add_metric([label, name, quantile], (figures.get(key) or 0.0) / 1000)
            current = run.get("current") or {}
            gauges["level"].add_metric([label], current["level"] + 1 if current else 0)
            gauges["offered_rate"].add_metric([label], current.get("rate") or 0.0)
            gauges["sent_rate"].add_metric([label], current.get("offered_rate") or 0.0)
            gauges["answered_rate"].add_metric([label], current.get("achieved_rate") or 0.0)
        yield requests
        yield failures
        yield latency
        yield from gauges.values()


def _counts(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per operation: the finished levels' counts plus the level in progress's so far."""
    counts = {name: dict(figures) for name, figures in run["operations"].items()}
    live = run.get("live_operations") or {}
    finished = {level["index"] for level in run["levels"]}
    if live and live.get("level") not in finished:
        for name, figures in (live.get("operations") or {}).items():
            into = counts.setdefault(name, {"requests": 0, "failures": 0})
            into["requests"] += figures.get("requests") or 0
            into["failures"] += figures.get("failures") or 0
    return counts


def metrics_text(state: DashboardState) -> bytes:
    """The state's figures as an OpenMetrics exposition."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StateCollector(state))
    return generate_latest(registry)
