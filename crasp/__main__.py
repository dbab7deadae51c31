"""``python -m crasp``: the same command line as the ``crasp`` script."""

from crasp.cli import main

if __name__ == "__main__":
    main()
