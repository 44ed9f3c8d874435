"""`python -m mvlattice …` is the same as the `mvlattice` command."""

import sys

from mvlattice.cli.main import main

sys.exit(main())
