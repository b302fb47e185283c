"""The pyop version a generated project records (PROJECT's `cliVersion`) and the range it pins."""

from __future__ import annotations

import re

from pyscaffold_op import __version__

DISTRIBUTION = "pyscaffold-op"
_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.\d+)*")


def version_range(version: str = __version__) -> str:
    """`>=X.Y,<X+1` for the running pyop X.Y.Z: its feature release up to the next major.

    A pre-release (`0.2.0.dev3`) is its own lower bound, since it sorts below `0.2` and the pin must
    admit the pyop that wrote it; a local label (`+g1234`) is dropped, as `>=` may not carry one.
    """
    version = version.partition("+")[0]
    match = _RELEASE.match(version)
    if match is None:
        raise ValueError(f"pyop version {version!r} does not start with MAJOR.MINOR")
    major, minor = int(match.group(1)), int(match.group(2))
    lower = f"{major}.{minor}" if match.end() == len(version) else version
    return f">={lower},<{major + 1}"
