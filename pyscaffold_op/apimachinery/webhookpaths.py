"""kubebuilder's webhook URL paths, in one place: the scaffolder writes them into the webhook markers,
the generator puts the conversion path into the CRD, and the runtime's webhook builder serves them.

`/mutate-<group with dashes>-<version>-<lower-case kind>` and `/validate-...` are controller-runtime's
`generateMutatePath`/`generateValidatePath`; `/convert` is its conversion webhook's path.
"""

from __future__ import annotations

from typing import Literal

CONVERT_PATH = "/convert"


def admission_path(prefix: Literal["mutate", "validate"], group: str, version: str, kind: str) -> str:
    """`/<prefix>-<group with dashes>-<version>-<kind>`; `group` is the full (qualified) API group."""
    return f"/{prefix}-{group.replace('.', '-')}-{version}-{kind.lower()}"


def mutate_path(group: str, version: str, kind: str) -> str:
    """The defaulting webhook's path of a kind."""
    return admission_path("mutate", group, version, kind)


def validate_path(group: str, version: str, kind: str) -> str:
    """The validating webhook's path of a kind."""
    return admission_path("validate", group, version, kind)
