"""Suite-wide guard: on CI a missing tool must fail the run, not silently skip a whole category."""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import pytest

# Run from a make target (`make stress-test PYTHON=.venv/bin/python`), the suite inherits that make's
# command-line variables, as MAKEFLAGS and as environment variables: every generated project's own
# `make` would take them (its Makefile reads `PYTHON ?= python3`), and a relative .venv/bin/python
# names a file that is not there. Each test gives a project's make what it means to.
for _inherited in ("MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL", "PYTHON", "PYOP", "PYOP_SOURCE"):
    os.environ.pop(_inherited, None)

# Generated projects find pyop's pytest plugin through its `pytest11` entry point. A checkout whose
# installed metadata predates that entry point (an editable install made before it) would run their
# tests without it: their pytest, run by these tests, then loads it by name (PYTEST_PLUGINS; the same
# name as the entry point, so a conftest's `pytest_plugins` line does not register it twice).
PYTEST_PLUGIN = "pyscaffold_op.envtest.pytest_plugin"
if not any(ep.value == PYTEST_PLUGIN for ep in entry_points(group="pytest11")):
    os.environ["PYTEST_PLUGINS"] = ",".join(
        p for p in (os.environ.get("PYTEST_PLUGINS", ""), PYTEST_PLUGIN) if p
    )

# Reasons used by the suite's skip markers when a tool of the machine is absent (kubectl, make, ruff).
_MISSING_TOOL = "is not installed"


def _on_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _on_ci():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    missing = sorted(
        {
            str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
            for report in reporter.stats.get("skipped", [])
            if _MISSING_TOOL in str(report.longrepr)
        }
    )
    if missing:
        reporter.ensure_newline()
        reporter.write_line(
            "CI: tests skipped for a missing tool; .ci/run must install it: " + "; ".join(missing),
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
