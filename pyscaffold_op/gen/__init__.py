"""Our controller-gen: CRDs from pydantic types, RBAC from markers, offline checks, models from CRDs.

In-process API (the CLI, the scaffolder's `create api --make` and its golden regeneration call these):

    generate_manifests(root, check=False, max_desc_len=None) -> list[Path]   # CRDs, role.yaml, webhooks
    generate_crds(root, check=False, max_desc_len=None) -> list[Path]  # changed (or stale) files
    generate_rbac(root, check=False) -> list[Path]
    generate_webhooks(root, check=False) -> list[Path]    # config/webhook/manifests.yaml from markers

Every CRD is checked against the API server's structural-schema rules before it is written (an
invalid CRD is a GenerateError, nothing is written). With `check=True` nothing is written: the
returned paths are the files that are out of date, and `config/samples/*.yaml` are validated too.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "generate_crds",
    "generate_manifests",
    "generate_rbac",
    "generate_webhooks",
    "render_crds",
    "render_rbac",
    "render_webhooks",
]

CRD_DIR = Path("config/crd/bases")
ROLE_FILE = Path("config/rbac/role.yaml")


_F = TypeVar("_F", bound=Callable[..., Any])


def _without_gc(func: _F) -> _F:
    """Run `func` with the cyclic garbage collector paused: a run allocates many long-lived objects
    (pydantic classes, schemas) that the collector would walk again and again (6% of a 200-kind run,
    ~10 MB more peak memory); what the run leaves is freed by the first collection after it."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()

    return wrapper  # type: ignore[return-value]


def _project(root: Path, project: Any) -> Any:
    from pyscaffold_op.project import load_project

    return project if project is not None else load_project(root)


def render_crds(
    root: Path, project: Any = None, *, max_desc_len: int | None = None
) -> dict[Path, dict[str, Any]]:
    """The CRDs of the project at `root`, keyed by their path (nothing written); `max_desc_len` is
    controller-gen's `crd:maxDescLen`."""
    from pydantic.errors import PydanticSchemaGenerationError

    from pyscaffold_op.apiextensions.crdvalidation import check_crd
    from pyscaffold_op.errors import GenerateError
    from pyscaffold_op.gen.crd import build_crds, crd_file_name
    from pyscaffold_op.gen.loader import load_kinds, project_imports
    from pyscaffold_op.gen.pathcheck import cel_problems
    from pyscaffold_op.gen.webhook import conversion_of

    project = _project(root, project)
    with project_imports(root, project.package):
        kinds = load_kinds(project, root)
        try:
            crds = build_crds(kinds, max_desc_len=max_desc_len)
        except PydanticSchemaGenerationError as err:  # a field typed with a plain class
            from pyscaffold_op.gen.usertypes import schema_error

            raise schema_error(kinds, err) from None
        for crd in crds:
            spec = crd["spec"]
            versions = [
                k for k in kinds if (k.gvk.group, k.gvk.kind) == (spec["group"], spec["names"]["kind"])
            ]
            conversion = conversion_of(versions)
            if conversion is not None:
                spec["conversion"] = conversion
    out = {}
    for crd in crds:
        problems = check_crd(crd)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = problems[0].splitlines()[0]  # a CEL compiler error goes on with the rule and a caret
            raise GenerateError(f"CRD {crd['metadata']['name']} would be rejected: {first}{more}")
        for version in crd["spec"]["versions"]:  # what pyop's CEL compiler does not type: field names
            undefined = cel_problems(version["schema"]["openAPIV3Schema"])
            if undefined:
                raise GenerateError(
                    f"CRD {crd['metadata']['name']} would be rejected (undefined field) in version "
                    f"{version['name']}: " + "; ".join(undefined)
                )
        out[root / CRD_DIR / crd_file_name(crd)] = crd
    return out


def render_rbac(root: Path, project: Any = None) -> list[dict[str, Any]]:
    """The RBAC documents from the markers in `src/<pkg>/controllers/` (nothing written)."""
    from pyscaffold_op.apimachinery.naming import pluralize
    from pyscaffold_op.gen.rbac import build_roles, collect_markers
    from pyscaffold_op.gen.rbaccheck import check_rbac_markers

    project = _project(root, project)
    markers = collect_markers(root / "src" / project.package / "controllers")
    own: dict[str, set[str]] = {}
    for r in project.resources:  # the kinds whose CRDs the project makes
        if r.api is not None and not r.core and not r.external:
            own.setdefault(r.qualified_group(), set()).add(r.plural or pluralize(r.kind))
    check_rbac_markers(markers, own)
    # a namespace-scoped project (PROJECT `namespaced: true`) gets an empty Role in kustomize's
    # `system` namespace when there are no markers yet, like its scaffolded role.yaml
    return build_roles(markers, empty_namespace="system" if project.namespaced else None)


def render_webhooks(root: Path, project: Any = None) -> list[dict[str, Any]]:
    """The webhook configurations from the markers in `src/<pkg>/webhooks/` (nothing written)."""
    from pyscaffold_op.gen.webhook import build_configurations, collect_markers

    project = _project(root, project)
    return build_configurations(collect_markers(root / "src" / project.package / "webhooks"))


def generate_webhooks(root: Path, *, check: bool = False, project: Any = None) -> list[Path]:
    """Write `config/webhook/manifests.yaml` when there are webhook markers (like controller-gen)."""
    from pyscaffold_op.gen.webhook import MANIFEST
    from pyscaffold_op.gen.yamlio import dump_documents

    docs = render_webhooks(root, project)
    if not docs:
        return []
    return _write({root / MANIFEST: dump_documents(docs)}, check)


def _write(files: dict[Path, str], check: bool) -> list[Path]:
    from pyscaffold_op.gen.yamlio import write_if_changed

    return [path for path, text in sorted(files.items()) if write_if_changed(path, text, check=check)]


@_without_gc
def generate_crds(
    root: Path,
    *,
    check: bool = False,
    project: Any = None,
    max_desc_len: int | None = None,
    sample_problems: list[str] | None = None,
) -> list[Path]:
    """Write `config/crd/bases/<group>_<plural>.yaml`; the files changed (or, with check, stale).

    `config/samples` is checked against the CRDs: with `check` a problem fails the run; otherwise
    each is appended to `sample_problems` when given (the CLI prints them as warnings)."""
    from pyscaffold_op.gen.yamlio import dump_documents

    crds = render_crds(root, project, max_desc_len=max_desc_len)
    if check:
        _check_samples(root, list(crds.values()))
    elif sample_problems is not None:
        from pyscaffold_op.gen.samples import check_samples

        sample_problems.extend(check_samples(root / "config" / "samples", list(crds.values())))
    return _write({path: dump_documents([crd]) for path, crd in crds.items()}, check)


def generate_rbac(root: Path, *, check: bool = False, project: Any = None) -> list[Path]:
    """Write `config/rbac/role.yaml`; `[path]` when it changed (or, with check, is stale)."""
    from pyscaffold_op.gen.yamlio import dump_documents

    return _write({root / ROLE_FILE: dump_documents(render_rbac(root, project))}, check)


@_without_gc
def generate_manifests(
    root: Path,
    *,
    check: bool = False,
    max_desc_len: int | None = None,
    sample_problems: list[str] | None = None,
) -> list[Path]:
    """CRDs, role.yaml and the webhook manifests for the project at `root`; the files changed (or,
    with check, stale). `sample_problems` as in `generate_crds`."""
    project = _project(root, None)
    crds = generate_crds(
        root, check=check, project=project, max_desc_len=max_desc_len, sample_problems=sample_problems
    )
    rbac = generate_rbac(root, check=check, project=project)
    return crds + rbac + generate_webhooks(root, check=check, project=project)


def _check_samples(root: Path, crds: list[dict[str, Any]]) -> None:
    from pyscaffold_op.errors import GenerateError
    from pyscaffold_op.gen.samples import check_samples

    problems = check_samples(root / "config" / "samples", crds)
    if problems:
        raise GenerateError("; ".join(problems))
