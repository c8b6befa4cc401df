"""The exit codes every command shares, and the line its help closes with."""

from __future__ import annotations

EXIT_CODES = {
    0: "success",
    1: "runtime error",
    2: "usage error",
    3: "an --expect-* not met",
    4: "acknowledged writes lost or corrupted",
}


def exit_codes(*codes: int) -> str:
    """The help's closing line for a command that can end with `codes`."""
    return "Exit codes: " + ", ".join(f"{code} {EXIT_CODES[code]}" for code in codes) + "."
