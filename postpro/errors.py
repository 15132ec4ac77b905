"""Errors a user can cause when reading results or checking them."""


class PostproError(Exception):
    """A results file or a request on it that cannot be served.

    The message names what is at fault (file, analysis, node, component, time, check) and
    fits on one line: the command line prints ``error: <message>`` and exits with code 2.
    """


class CheckSpecError(PostproError):
    """An invalid ``[[check]]`` table; the message starts with its key path, ``check[2].time``."""
