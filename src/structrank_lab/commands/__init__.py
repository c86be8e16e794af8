"""The lab's commands, ``structrank reproduce``, ``results`` and ``bench``: one module each, on the protocol of
``structrank.commands`` (``HELP``, ``INPUTS``, ``add_parser``, ``run``), declared as entry points of the group
``structrank.commands`` in pyproject.toml so that the ``structrank`` command lists and runs them."""
