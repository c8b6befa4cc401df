"""`python -m dbladder`: the same command as `dbladder`."""

from .cli import main

if __name__ == "__main__":
    main()
