"""The error hierarchy shared by every pyop command.

A `PyopError` carries one line meant for a human; the CLI prints it to stderr and exits with status 2.
"""


class PyopError(Exception):
    """A user-facing error: one line naming the bad value and the rule it breaks."""

    exit_code = 2


class ValidationError(PyopError):
    """An input (flag, name, file) breaks a naming or format rule."""


class ProjectError(PyopError):
    """The working folder is not in the state the command needs (no PROJECT, API exists, ...)."""


class GenerateError(PyopError):
    """A model, marker or manifest cannot be turned into valid Kubernetes YAML."""
