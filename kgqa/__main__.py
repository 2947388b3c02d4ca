"""``python -m kgqa``: the same as the ``kgqa`` console script (``kgqa.cli:main``)."""

from kgqa.cli import main

main()
