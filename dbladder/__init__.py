"""dbladder: which database holds my web app, and where does each one stop?

The library is the product; the `dbladder` command is a thin layer over it.
"""

__version__ = "0.1.0"
