"""Script form of the reference trainer, for launchers that run a file rather than a module:

    /usr/bin/python3 engine/workloads/reference/train.py <config.yml> key=value ...

is the same as `python3 -m podium_reference.train ...` with this directory on PYTHONPATH.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from podium_reference.train import main  # noqa: E402  (needs the path set above)

if __name__ == "__main__":
    sys.exit(main())
