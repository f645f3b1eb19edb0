"""``python -m treeplex.cli``: the ``treeplex`` command."""

import sys

from . import main

sys.exit(main())
