"""`python -m mvlattice …` is the same as the `mvlattice` command."""

import sys

from mvlattice.service.cli import main

sys.exit(main())
