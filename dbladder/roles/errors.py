"""The conditions a user meets with `--cpus`, `--memory` and `--drop-caches`."""

from __future__ import annotations

from ..errors import UsageError


class BadPlacement(UsageError):
    """A `--cpus`, `--memory` or `--drop-caches` the machine or this process cannot honour (exit 2)."""


class CgroupUnavailable(BadPlacement):
    """No memory cgroup can be made here (no cgroup filesystem, not root, no delegation)."""


class UnmanagedRole(BadPlacement):
    """CPUs or memory asked for a role dbladder did not start (the machine's own database server)."""
