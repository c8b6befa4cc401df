"""dbladder: which database holds my web app, and where does each one stop?

The library is the product; the `dbladder` command is a thin layer over it.
"""

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _version() -> str:
    # The version is written in one place, pyproject.toml. An installed dbladder (a wheel, or
    # `pip install -e .`) has it in its metadata; a source checkout put on sys.path without
    # installing has none, so it reads the pyproject.toml beside the package.
    try:
        return version("dbladder")
    except PackageNotFoundError:
        try:
            pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text("utf-8"))
            return str(pyproject["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


__version__ = _version()
