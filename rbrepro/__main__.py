"""`python -m rbrepro` runs the command line."""

import sys

from rbrepro.cli import main

sys.exit(main())
