"""`python -m slimdata ...` runs the `slimdata` command line."""

import sys

from slimdata.cli import main

sys.exit(main())
