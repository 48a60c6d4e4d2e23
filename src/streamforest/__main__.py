"""``python -m streamforest``: the ``streamforest`` command."""

import sys

from .cli import main

sys.exit(main())
