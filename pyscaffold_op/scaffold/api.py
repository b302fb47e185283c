"""`pyop create api`: validate, plan every new file and edit in memory, then apply atomically."""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from pyscaffold_op import names
from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import (
    PROJECT_FILE,
    Project,
    Resource,
    ResourceAPI,
    ResourceController,
    load_project,
)
from pyscaffold_op.scaffold import deployimage, edits, pysource
from pyscaffold_op.scaffold.boilerplate import project_header
from pyscaffold_op.scaffold.external_model import plan_external_model
from pyscaffold_op.scaffold.inputs import ApiOptions, validate_api, validate_group_package
from pyscaffold_op.scaffold.otherapi import OtherKind, core_kind, external_kind, is_core
from pyscaffold_op.scaffold.planner import Planner
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.resource import ResourceNames, resource_names
from pyscaffold_op.scaffold.transaction import FilePlan, apply

ROLE_VERBS = {
    "admin": ["'*'"],
    "editor": ["create", "delete", "get", "list", "patch", "update", "watch"],
    "viewer": ["get", "list", "watch"],
}


def other_kind(options: ApiOptions, plural: str, package: str) -> OtherKind | None:
    """The built-in or external kind the options name, or None for a kind of this project."""
    if options.external_api_path:
        return external_kind(
            options.group,
            options.version,
            options.kind,
            path=options.external_api_path,
            domain=options.external_api_domain,
            module=options.external_api_module,
            plural=plural,
            namespaced=options.namespaced,
            package=package,
        )
    # kubebuilder: a core group names the built-in kinds only without --resource; with it, `batch` is
    # the project's own group batch.<domain> (the CronJob tutorial)
    if is_core(options.group) and not options.resource:
        return core_kind(options.group, options.version, options.kind)
    return None


def _own(resource: Resource) -> bool:
    return not resource.core and not resource.external


def plan_api(options: ApiOptions, root: Path, project: Project) -> tuple[FilePlan, Project]:
    """The files and edits of `create api` for `options` in the project at `root`; changes nothing."""
    return _plan(options, validate_api(options), root, project)


def _plan(options: ApiOptions, plural: str, root: Path, project: Project) -> tuple[FilePlan, Project]:
    """`plan_api` for options already validated on their own (`plural` is what `validate_api` returned)."""
    names.validate_qualified_group(options.group, project.domain)
    other = other_kind(options, plural, project.package)
    own = project.find(options.group, options.version, options.kind)
    if other is not None and other.core and own is not None and _own(own):
        other = None  # --resource=false adds a controller to the project's own batch.<domain> CronJob
    if other is not None:
        return _plan_other(options, other, root, project)
    validate_group_package(options.group, project)
    if project.multigroup:
        module = project.group_module(options.group)
        clash = sorted(
            r.group for r in project.resources
            if _own(r) and r.group != options.group and project.group_module(r.group) == module
        )  # fmt: skip
        if clash:
            raise ProjectError(
                f"cannot add group {options.group!r}: its Python packages api/{module}/ and "
                f"controllers/{module}/ already hold group {clash[0]!r} (a group's package is the group "
                "with '-' and '.' made '_'); choose another group"
            )
    recorded = project.find(options.group, options.version, options.kind)
    if not options.resource and recorded is not None and recorded.api is not None:
        # a controller for existing types: their scope and plural are the ones PROJECT records
        options = replace(options, namespaced=recorded.api.namespaced)
        if options.plural is None and recorded.plural:
            plural = recorded.plural
    other_groups = sorted({r.group for r in project.resources if _own(r) and r.group != options.group})
    if other_groups and not project.multigroup:
        raise ProjectError(
            f"cannot add group {options.group!r}: this single-group project already holds group "
            f"{other_groups[0]!r}; multiple groups need a project made with `pyop init --multigroup`"
        )
    existing = project.find(options.group, options.version, options.kind)
    if existing is not None and not options.force:
        if options.resource and existing.api is not None:
            raise ProjectError(
                f"API {options.group}/{options.version}, Kind={options.kind} already exists in "
                f"{PROJECT_FILE}; "
                "pass --force to overwrite its files"
            )
        if options.controller and not options.resource:
            _refuse_existing_controller(options, existing)
    if options.controller and not options.force and options.controller_name is None:
        # a kind has one controller (its file is named after the kind, not the version)
        sibling = next(
            (r for r in project.resources
             if r.has_controller() and (r.group, r.kind) == (options.group, options.kind)
             and r.version != options.version),
            None,
        )  # fmt: skip
        if sibling is not None:
            raise ProjectError(
                f"kind {options.kind} of group {options.group} already has a controller (for version "
                f"{sibling.version}); to add version {options.version} of its API pass --no-controller, "
                "or pass --force to replace that controller"
            )
    r = resource_names(
        project,
        group=options.group,
        version=options.version,
        kind=options.kind,
        plural=plural,
        namespaced=options.namespaced,
        header=project_header(root),
        controller_name=options.controller_name,
        deploy_image=options.deploy_image,
    )
    planner = Planner(FilePlan(root), options.force)
    if not options.resource and not (root / r.types_path).is_file():
        raise ProjectError(
            f"no API types for {options.group}/{options.version}, Kind={options.kind} "
            f"({r.types_path} is missing): "
            "pass --resource to create them"
        )
    docstrings = {"api": f"The API types of {project.project_name}, one package per version.",
                  "controllers": f"The controllers of {project.project_name}."}  # fmt: skip
    if options.resource:
        _plan_resource(planner, r, docstrings)
    # kubebuilder: SSA cannot be turned off once PROJECT records it (a controller added later uses it)
    ssa = options.ssa or bool(recorded is not None and recorded.api is not None and recorded.api.ssa)
    if options.controller:
        # the test creates the sample when there is one (a controller added later to an API whose
        # sample the user removed builds the object in code)
        from_sample = options.resource or (root / r.sample_path).is_file()
        if options.deploy_image is not None:
            _plan_controller(
                planner,
                r,
                docstrings,
                from_sample,
                controller_template="api/deployimage_controller.py.jinja",
                test_template="api/deployimage_controller_test.py.jinja",
            )
            _add_manager_env(planner, options.deploy_image, r)
        else:
            _plan_controller(
                planner, r, docstrings, from_sample, ssa=ssa, daemon=options.daemon, timer=options.timer
            )
    planner.refuse_clashes()
    updated = _updated_project(project, replace(options, ssa=ssa), plural, r)
    planner.plan.write(PROJECT_FILE, updated.dump())
    format_python(planner.plan)
    generated = [f"config/crd/{r.crd_file}"] if options.resource else []
    planner.write_api_record(options.group, options.version, options.kind, generated)
    return planner.plan, updated


def _plan_other(
    options: ApiOptions, other: OtherKind, root: Path, project: Project
) -> tuple[FilePlan, Project]:
    """A controller for a built-in or external kind: no types, sample, roles or CRD (like kubebuilder)."""
    what = "a built-in" if other.core else "an external"
    if options.daemon or options.timer:
        raise ValidationError(
            f"--daemon and --timer scaffold for this project's own kinds; {other.kind} is {what} kind: "
            "add builder.daemon()/timer() to its controller by hand (docs/runtime.md, Daemons and timers)"
        )
    if options.resource:
        raise ValidationError(
            f"{other.kind} is {what} kind: its types are not this project's, so pass --no-resource "
            "(only a controller is scaffolded)"
        )
    existing = project.find(other.group, other.version, other.kind)
    if existing is not None and _own(existing):
        raise ProjectError(
            f"{other.group}/{other.version}, Kind={other.kind} is already one of this project's APIs"
        )
    if existing is not None and not options.force:
        _refuse_existing_controller(options, existing)
    r = resource_names(
        project,
        group=other.group,
        version=options.version,
        kind=options.kind,
        plural=other.plural,
        namespaced=other.namespaced,
        header=project_header(root),
        controller_name=options.controller_name,
        other=other,
    )
    planner = Planner(FilePlan(root), options.force)
    docstrings = {"controllers": f"The controllers of {project.project_name}."}
    _plan_controller(
        planner, r, docstrings, False, ssa=False, test_template="api/other_controller_test.py.jinja"
    )
    plan_external_model(planner.plan, r, other)
    planner.refuse_clashes()
    updated = project.model_copy(deep=True)
    listed = updated.find(other.group, other.version, other.kind)
    if listed is None:
        updated.resources.append(
            Resource(
                controller=options.controller_name is None,
                controllers=[ResourceController(name=options.controller_name)]
                if options.controller_name
                else None,
                core=True if other.core else None,
                external=None if other.core else True,
                domain=other.domain,
                group=other.group,
                kind=other.kind,
                module=other.recorded_module,
                path=other.path,
                plural=None if other.core or other.plural == names.pluralize(other.kind) else other.plural,
                version=other.version,
            )
        )
    else:
        _record_controller(listed, options.controller_name)
    planner.plan.write(PROJECT_FILE, updated.dump())
    format_python(planner.plan)
    planner.write_api_record(other.group, other.version, other.kind, [])
    return planner.plan, updated


def _plan_resource(planner: Planner, r: ResourceNames, docstrings: dict[str, str]) -> None:
    planner.package_inits(r.header, r.api_module, docstrings)
    planner.ensure(f"{r.api_dir}/groupversion_info.py", render("api/groupversion_info.py.jinja", r))
    planner.ensure(f"{r.api_dir}/__init__.py", render("api/version_init.py.jinja", r))
    prefix = "deployimage_" if r.deploy_image is not None else ""
    planner.new(r.types_path, render(f"api/{prefix}types.py.jinja", r))
    _export_kind(planner, r, f"{r.api_dir}/__init__.py")
    planner.new(r.sample_path, render(f"api/{prefix}sample.yaml.jinja", r))
    planner.ensure("config/samples/kustomization.yaml", render("api/samples_kustomization.yaml.jinja", r))
    _add_entry(planner, "config/samples/kustomization.yaml", r.sample_name, "samples")
    for role, verbs in ROLE_VERBS.items():
        filename = f"{r.role_file_prefix}_{role}_role.yaml"
        planner.new(f"config/rbac/{filename}", render("api/role.yaml.jinja", r, role=role, verbs=verbs))
        _add_entry(planner, "config/rbac/kustomization.yaml", filename, "rbac-roles")
    planner.ensure("config/crd/kustomization.yaml", render("api/crd_kustomization.yaml.jinja", r))
    _add_entry(planner, "config/crd/kustomization.yaml", r.crd_file, "crdkustomizeresource")
    where = "config/default/kustomization.yaml"
    planner.insert(
        where, "enable", "../crd", lambda text: edits.enable_list_entry(text, "../crd", where=where)
    )


def _add_entry(planner: Planner, where: str, entry: str, marker_name: str) -> None:
    planner.insert(
        where,
        "entry",
        entry,
        lambda text: edits.add_list_entry(text, entry, where=where, marker_name=marker_name),
    )


def _export_kind(planner: Planner, r: ResourceNames, where: str) -> None:
    """The kind's classes imported into its version package and listed in its `__all__`."""
    kind = r.kind
    import_line = f"from {r.api_module}.{r.kind_lower}_types import {kind}, {kind}Spec, {kind}Status"
    planner.insert(
        where,
        "statement",
        import_line,
        lambda text: pysource.insert_sorted(
            text, "imports", import_line, where=where, sort_key=pysource.import_sort_key
        ),
    )
    for name in (kind, f"{kind}Spec", f"{kind}Status"):
        entry = f'"{name}",'
        planner.insert(
            where, "statement", entry, functools.partial(pysource.insert_all_entry, entry=entry, where=where)
        )


def _plan_controller(
    planner: Planner,
    r: ResourceNames,
    docstrings: dict[str, str],
    from_sample: bool,
    *,
    ssa: bool = False,
    daemon: bool = False,
    timer: bool = False,
    test_template: str = "api/controller_test.py.jinja",
    controller_template: str = "api/controller.py.jinja",
) -> None:
    planner.package_inits(r.header, r.controller_module, docstrings)
    flags = {"from_sample": from_sample, "ssa": ssa, "daemon": daemon, "timer": timer}
    planner.new(r.controller_path, render(controller_template, r, **flags))
    planner.new(r.controller_test_path, render(test_template, r, **flags))
    main_path = f"src/{r.package}/__main__.py"
    imported = (
        r.reconciler if r.reconciler_import == r.reconciler else f"{r.reconciler} as {r.reconciler_import}"
    )
    import_line = f"from {r.controller_module} import {imported}"
    registration = [
        f"{r.reconciler_import}(",
        "    client=mgr.client,",
        f'    recorder=mgr.get_event_recorder("{r.recorder_name}"),',
        ").setup_with_manager(mgr)",
    ]
    planner.insert(
        main_path,
        "statement",
        import_line,
        lambda text: pysource.insert_import(text, import_line, where=main_path, package=r.package),
    )
    planner.insert(
        main_path,
        "statement",
        "\n".join(registration),
        lambda text: pysource.insert_at_marker(text, "controllers", registration, where=main_path),
    )


def _add_manager_env(planner: Planner, image: deployimage.DeployImage, r: ResourceNames) -> None:
    """The image's env var in the manager container, read by the controller (kubebuilder does this too)."""
    name = image.env_var(r.kind)
    planner.insert(
        deployimage.MANAGER_YAML,
        "env",
        f"{name}={image.image}",
        lambda text: deployimage.add_env(text, name, image.image),
    )


def _updated_project(project: Project, options: ApiOptions, plural: str, r: ResourceNames) -> Project:
    updated = project.model_copy(deep=True)
    resource = updated.find(options.group, options.version, options.kind)
    if resource is None:
        resource = Resource(
            group=options.group, version=options.version, kind=options.kind, domain=project.domain
        )
        updated.resources.append(resource)
    resource.domain = project.domain
    resource.path = r.api_module
    if options.resource:
        resource.api = ResourceAPI(crd_version="v1", namespaced=options.namespaced, ssa=options.ssa or None)
        # like kubebuilder, the plural is recorded only when it differs from the computed one
        resource.plural = plural if plural != names.pluralize(options.kind) else None
    if options.controller:
        _record_controller(resource, options.controller_name)
    if options.deploy_image is not None:  # kubebuilder records the plugin's flags per kind
        entry = deployimage.recorded(
            options.deploy_image, project.domain, options.group, options.version, options.kind
        )
        updated.plugins = deployimage.with_resource(updated.plugins, entry)
    return updated


def _refuse_existing_controller(options: ApiOptions, existing: Resource) -> None:
    """A controller of that name (the lower-cased kind by default) is there already (kubebuilder: the
    same error); another name adds a controller."""
    name = options.controller_name or options.kind.lower()
    taken = existing.controller_names()
    if name not in taken:
        return
    what = f"{existing.group}/{existing.version}, Kind={existing.kind}"
    if options.controller_name is None:
        raise ProjectError(
            f"the controller for {what} already exists; pass --force to overwrite it, or "
            "--controller-name to add another"
        )
    raise ProjectError(
        f"a controller named {name!r} already exists for {what}; pass --force to overwrite it, or "
        "another --controller-name"
    )


def _record_controller(resource: Resource, name: str | None) -> None:
    """PROJECT's `controller: true`, or once a controller has a name the `controllers:` list (kubebuilder's
    way: the unnamed controller is listed under the lower-cased kind)."""
    if name is None and not resource.controllers:
        resource.controller = True
        return
    listed = resource.controller_names()
    new = name or resource.kind.lower()
    resource.controllers = [
        ResourceController(name=n) for n in [*listed, *([new] if new not in listed else [])]
    ]
    resource.controller = False


def api_warnings(options: ApiOptions, project: Project) -> list[str]:
    """What `create api` did that will not work as is: one line each, printed after the files."""
    out = []
    recorded = project.find(options.group, options.version, options.kind)
    cluster_scoped = recorded is not None and recorded.api is not None and not recorded.api.namespaced
    if project.namespaced and cluster_scoped and options.controller:
        out.append(
            f"warning: {options.kind} is cluster-scoped but this project's manager is namespaced "
            f"(init --namespaced): its Role in {project.project_name}-system cannot grant access to "
            f"cluster-scoped objects, so in a cluster the {options.kind} controller will be forbidden; "
            "give the manager a ClusterRole and ClusterRoleBinding for it in config/rbac/"
        )
    versions = sorted(
        r.version for r in project.resources
        if (r.group, r.kind) == (options.group, options.kind) and r.api is not None
    )  # fmt: skip
    if options.resource and len(versions) > 1:
        out.append(
            f"note: kind {options.kind} now has versions {', '.join(versions)}: mark exactly one of them "
            f"as the storage version with the line `# +kubebuilder:storageversion` above `class "
            f"{options.kind}`, or `make manifests` fails"
        )
    return out


def storage_version_missing(options: ApiOptions, project: Project, root: Path) -> bool:
    """Whether the kind now has several versions and none of their classes is marked
    `+kubebuilder:storageversion`: `make manifests` would fail, so `create api` leaves it for later
    (kubebuilder's `create api --version v2` of an existing kind succeeds too)."""
    import re

    paths = [
        r.path for r in project.resources
        if (r.group, r.kind) == (options.group, options.kind) and r.api is not None and r.path
    ]  # fmt: skip
    if len(paths) < 2:
        return False
    marked = re.compile(
        rf"^#\s*\+kubebuilder:storageversion\s*$(?:\n#.*$)*\nclass {re.escape(options.kind)}\(", re.M
    )
    for path in paths:
        folder = root / "src" / Path(*path.split("."))
        for source in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            if marked.search(source.read_text(encoding="utf-8", errors="replace")):
                return False
    return True


def create_api(options: ApiOptions, start: Path) -> tuple[Path, list[str]]:
    """`pyop create api` from `start` (the project folder): returns the project root and the files written."""
    from pyscaffold_op.project import find_project_root

    # the flags are checked before the folder, so a bad name is reported even outside a project
    plural = validate_api(options)
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run `pyop init` first")
    plan, _ = _plan(options, plural, root, load_project(root))
    return root, apply(plan)
