# ruff: noqa: E501 - marker comments and expected schemas read best on one line
"""Small pyop projects written by hand in tmp folders (no scaffolder involved)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PROJECT_TEMPLATE = """\
domain: {domain}
layout:
- python.pyop.io/v1
projectName: {name}
repo: github.com/example/{name}
resources:
{resources}version: "3"
"""

RESOURCE_TEMPLATE = """\
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: {domain}
  group: {group}
  kind: {kind}
  version: {version}
"""


class ProjectBuilder:
    """Writes PROJECT, `src/<pkg>/api/<version>/*.py` and `src/<pkg>/controllers/*.py`."""

    def __init__(
        self, root: Path, name: str = "demo", domain: str = "example.com", multigroup: bool = False
    ) -> None:
        self.root = root
        self.multigroup = multigroup
        self.name = name
        self.package = name.replace("-", "_")
        self.domain = domain
        self.resources: list[tuple[str, str, str]] = []
        (root / "src" / self.package / "controllers").mkdir(parents=True, exist_ok=True)
        (root / "src" / self.package / "__init__.py").write_text("")
        (root / "src" / self.package / "api").mkdir(exist_ok=True)
        (root / "src" / self.package / "api" / "__init__.py").write_text("")
        (root / "src" / self.package / "controllers" / "__init__.py").write_text("")

    def api(self, group: str, version: str, kind: str, module: str, source: str) -> ProjectBuilder:
        """Add a resource to PROJECT and write `api/<version>/<module>.py`."""
        self.resources.append((group, version, kind))
        folder = self.root / "src" / self.package / "api" / version
        if self.multigroup:
            (self.root / "src" / self.package / "api" / group).mkdir(parents=True, exist_ok=True)
            (self.root / "src" / self.package / "api" / group / "__init__.py").write_text("")
            folder = self.root / "src" / self.package / "api" / group / version
        folder.mkdir(parents=True, exist_ok=True)
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text(f'GROUP = "{group}.{self.domain}"\nVERSION = "{version}"\n')
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
        self.write_project()
        return self

    def controller(self, module: str, source: str) -> ProjectBuilder:
        (self.root / "src" / self.package / "controllers" / f"{module}.py").write_text(
            textwrap.dedent(source)
        )
        return self

    def sample(self, name: str, text: str) -> ProjectBuilder:
        folder = self.root / "config" / "samples"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))
        return self

    def write_project(self) -> None:
        resources = "".join(
            RESOURCE_TEMPLATE.format(domain=self.domain, group=g, version=v, kind=k)
            for g, v, k in self.resources
        )
        text = PROJECT_TEMPLATE.format(domain=self.domain, name=self.name, resources=resources)
        if not resources:
            text = text.replace("resources:\n", "resources: []\n")
        if self.multigroup:
            text = "multigroup: true\n" + text
        (self.root / "PROJECT").write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., ProjectBuilder]:
    def make(name: str = "demo", domain: str = "example.com", multigroup: bool = False) -> ProjectBuilder:
        root = tmp_path / name
        root.mkdir()
        return ProjectBuilder(root, name, domain, multigroup)

    return make


AT_TYPES = '''\
from datetime import datetime
from typing import Literal

from pydantic import Field

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel

from . import GROUP, VERSION


class AtSpec(KubeModel):
    """AtSpec defines the desired state of At."""

    schedule: datetime
    """When to run the command, an RFC 3339 date-time."""
    command: str = Field(min_length=1)
    """The shell command to run."""


class AtStatus(KubeModel):
    """AtStatus defines the observed state of At."""

    phase: Literal["PENDING", "RUNNING", "DONE"] | None = None
    """PENDING, RUNNING or DONE."""
    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] = Field(default_factory=list)
    """The latest observations."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Schedule",type="string",JSONPath=".spec.schedule"
# +kubebuilder:printcolumn:name="Command",type="string",JSONPath=".spec.command"
# +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
class At(CustomResource):
    """At is the Schema for the ats API."""

    gvk = GroupVersionKind(GROUP, VERSION, "At")
    plural = "ats"
    spec: AtSpec = Field(default_factory=AtSpec)
    status: AtStatus | None = None
'''

AT_CONTROLLER = """\
from pyscaffold_op.runtime import Result  # noqa: F401 - never imported by the generator

# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats,verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/status,verbs=get;update;patch
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/finalizers,verbs=update
# +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete


class AtReconciler:
    pass
"""


@pytest.fixture
def at_project(project: Callable[..., ProjectBuilder]) -> ProjectBuilder:
    builder = project("programming-kubernetes", "viper.run")
    builder.api("programming-kubernetes", "v1alpha1", "At", "at_types", AT_TYPES)
    builder.controller("at_controller", AT_CONTROLLER)
    return builder


@pytest.fixture(autouse=True)
def fast_schema_checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every model schema the generator converts in these tests is computed both ways: from the
    fields (`gen.fastschema`) and through pydantic's `model_json_schema`. Where the fast path
    answers, pydantic's path must give the same schema (and must not reject the model). Returns the
    names of the models the fast path answered for."""
    from pyscaffold_op.errors import GenerateError
    from pyscaffold_op.gen.schema import SchemaConverter

    answered: list[str] = []

    def both_ways(self: SchemaConverter, cls: type) -> dict[str, Any]:
        fast = self.fast_schema(cls)  # type: ignore[arg-type]
        if fast is None:
            return self.pydantic_schema(cls)  # type: ignore[arg-type]
        try:
            slow = self.pydantic_schema(cls)  # type: ignore[arg-type]
        except GenerateError as err:
            raise AssertionError(
                f"the fast path accepts {cls.__qualname__}; pydantic's rejects it: {err}"
            ) from err
        assert fast == slow, f"{cls.__qualname__}: the fast path's schema differs from pydantic's"
        answered.append(cls.__qualname__)
        return fast

    monkeypatch.setattr(SchemaConverter, "model_schema", both_ways)
    return answered
