"""`python -m dbladder.service`: run the service configured in $DBLADDER_SERVICE_CONFIG.

This is how `running_service` starts it; people use `dbladder serve`.
"""

from __future__ import annotations

import sys

from ..engines.describe import render
from ..errors import DbladderError
from .config import ServiceConfig
from .server import ServiceStarted, serve


def _announce(started: ServiceStarted) -> None:
    print(started.summary(), flush=True)
    print(render(started.engine), flush=True)
    for warning in (started.engine.durability_warning, *started.warnings):
        if warning:
            print(
                warning if warning.startswith("WARNING") else f"WARNING: {warning}",
                file=sys.stderr,
                flush=True,
            )


def main() -> None:
    try:
        serve(ServiceConfig.from_env(), on_started=_announce)
    except DbladderError as exc:
        print(f"Error: {exc}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
