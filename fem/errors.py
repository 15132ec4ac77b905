"""Errors a user can cause: each names the study key, file or mesh entity at fault."""

import os


class StudyError(Exception):
    """Invalid study, mesh or results input. The message names the key, file or entity.

    The CLI prints ``error: <message>`` on one line and exits with code 2.
    """


class MeshError(StudyError):
    """Invalid or unreadable mesh file or mesh entity."""


class FunctionError(StudyError):
    """Invalid time function (table, expression, record) or evaluation outside its domain."""


class NotAvailableError(StudyError):
    """A feature named in the study that this version of fem does not provide yet."""


class ResultsError(StudyError):
    """A results file that is missing, not a fem results file, or lacks what is asked."""


class SolverError(Exception):
    """A numerical failure during an analysis (singular matrix, divergence, ...)."""


#: the longest name of a file or folder, and the longest path, most systems allow (bytes)
NAME_MAX, PATH_MAX = 255, 4096


def path_problem(path) -> str | None:
    """Why the system would refuse ``path`` whatever the files present (a NUL byte, a name or
    a path too long), or None."""
    text = os.fspath(path)
    if "\0" in text:
        return "holds a NUL byte, which no file name may hold"
    if len(os.fsencode(text)) > PATH_MAX:
        return (f"is too long, {len(os.fsencode(text))} bytes, more than the {PATH_MAX} a path "
                f"may be")
    for part in text.split(os.sep):
        if len(os.fsencode(part)) > NAME_MAX:
            return (f"has a name too long, {len(os.fsencode(part))} bytes ('{part[:24]}...'), "
                    f"more than the {NAME_MAX} a file name may be")
    return None


def shown_path(path) -> str:
    """A path as a message shows it: a long one cut, a NUL byte written \\0."""
    text = os.fspath(path).replace("\0", "\\0")
    return text if len(text) <= 80 else f"{text[:60]}...{text[-16:]}"
