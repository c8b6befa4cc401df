"""The live dashboard of `run --dashboard` and `compare --dashboard`, and `report --serve`: one
page fed by server-sent events, its /metrics in OpenMetrics text (docs/dashboard.md)."""

from .progress import DashboardProgress
from .server import DashboardServer, DashboardUnavailable, RemoteDashboard, check_address, parse_address
from .state import DashboardState, state_of_bundle

__all__ = [
    "DashboardProgress",
    "DashboardServer",
    "DashboardState",
    "DashboardUnavailable",
    "RemoteDashboard",
    "check_address",
    "parse_address",
    "state_of_bundle",
]
