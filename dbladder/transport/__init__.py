"""How the service reaches the database: in-process, Unix socket or TCP, and added latency.

`addresses.transport_url` gives the same database over another transport; `relay.Relay` is a
TCP relay that delays every chunk each way (`--added-latency`), and `addresses.through_relay`
the URL that goes through it.
"""

from ..errors import TransportFailed, TransportUnavailable
from .addresses import TRANSPORTS, relay_target, through_relay, transport_of, transport_url
from .background import background_relay, relay_process
from .relay import Relay, RelayFailed, RelayStats, RelayTarget

__all__ = [
    "TRANSPORTS",
    "Relay",
    "RelayFailed",
    "RelayStats",
    "RelayTarget",
    "TransportFailed",
    "TransportUnavailable",
    "background_relay",
    "relay_process",
    "relay_target",
    "through_relay",
    "transport_of",
    "transport_url",
]
