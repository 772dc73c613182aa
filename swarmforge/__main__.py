"""`python -m swarmforge`."""

import sys

from swarmforge.cli import main

sys.exit(main())
