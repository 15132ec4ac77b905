"""The ``fem post`` subcommands, one module each.

Every module offers ``add_parser(subparsers)``, which declares the subcommand and its
options, and ``run(args) -> int``, which returns the exit code. The computations they rely
on are public functions of the same modules, usable without the command line.
"""
