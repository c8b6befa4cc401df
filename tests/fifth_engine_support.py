"""A fifth engine installed for a test: the package `litecopy` (tests/fifth_engine/litecopy/, SQLite
under its own scheme `litecopy:///path.db`), found through the entry point group `dbladder.engines`
as a package pip had installed would be.

Installed by writing the `*.dist-info` pip would write (METADATA and entry_points.txt) into a folder
put on the path, rather than by `pip install` into a new virtualenv: importlib.metadata reads any
dist-info it finds on sys.path, whoever wrote it, so the registry goes through the very lookup it
goes through for a pip-installed package; PYTHONPATH carries the folder to every process a run
starts (the service's workers, the writer, the generator's processes), each of which reads the
group itself; and it costs a few file writes, where a virtualenv with dbladder's dependencies takes
about 40 s on this machine (`pip install -e '.[test]'`).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_ROOT = Path(__file__).parent / "fifth_engine"
"""The folder holding the package `litecopy`."""


def write_dist_info(site: Path, name: str, entry_points: dict[str, str]) -> Path:
    """A `NAME-1.0.dist-info` in `site` registering `entry_points` (engine name -> "module:attr")
    under dbladder.engines, as pip writes one for an installed package; `site` itself."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "".join(f"{engine} = {target}\n" for engine, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[dbladder.engines]\n{lines}")
    return site


def litecopy_paths(site: Path) -> list[Path]:
    """The folders to put on the path for `litecopy` to be installed: its dist-info's and its own."""
    return [write_dist_info(site, "litecopy", {"litecopy": "litecopy:KIND"}), PACKAGE_ROOT]


def environment_with_litecopy(site: Path) -> dict[str, str]:
    """This process's environment with `litecopy` installed for the processes started with it."""
    paths = [str(path) for path in litecopy_paths(site)]
    given = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([given] if given else [])])}
