"""``python -m graphmem.cli``: the same as the ``graphmem`` command."""

from . import main

main()
