"""``python -m hwaccel ARGS``: the ``hwaccel`` command, with the same output.

The package carries the command itself (hwaccel/bin/hwaccel), so this runs
exactly what a shell would. The ``hwaccel`` script pip installs runs it too.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def main() -> NoReturn:
    command = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "hwaccel")
    if not os.access(command, os.X_OK):
        sys.stderr.write(f"hwaccel: the command is missing from the package ({command}); reinstall hwaccel\n")
        sys.exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command, ["hwaccel", *sys.argv[1:]])


if __name__ == "__main__":
    main()
