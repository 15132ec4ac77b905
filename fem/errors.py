"""Errors a user can cause: each names the study key, file or mesh entity at fault."""


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
