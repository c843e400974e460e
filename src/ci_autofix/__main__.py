"""`python -m ci_autofix`: the container's entrypoint (no arguments: run as the action)."""

import sys

from ci_autofix.cli import main

sys.exit(main())
