"""``python3 -m tle_compiler.cli``: tle-dump (as ``tle-dump`` and ``python3 -m
tle_compiler.cli.dump`` run it), for an environment whose scripts directory is not on PATH."""

import sys

from .dump import main

if __name__ == "__main__":
    sys.exit(main())
