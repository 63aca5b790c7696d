"""Subcommands of the ``serdes`` CLI, one module each."""
