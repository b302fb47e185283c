"""`pyop create api`: validate, plan every new file and edit in memory, then apply atomically."""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import PROJECT_FILE, Project, Resource, ResourceAPI, load_project
from pyscaffold_op.scaffold import deployimage, edits, names
from pyscaffold_op.scaffold.boilerplate import project_header
from pyscaffold_op.scaffold.journal import RECORD_FILE, ApiRecord, Insertion, digest, load_record
from pyscaffold_op.scaffold.otherapi import OtherKind, core_kind, external_kind, is_core
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.transaction import FilePlan, apply

# Names the scaffolded modules import or define: a kind with one of them would shadow it.
RESERVED_KINDS = frozenset(
    {
        "Client", "Condition", "CustomResource", "EventRecorder", "Field", "GroupVersionKind",
        "KubeModel", "Manager", "NotFound", "ObjectMeta", "Request", "Result",
    }
)  # fmt: skip

# Local names of the scaffolded reconcile() and its test: the kind's snake_case variable would shadow them.
RESERVED_VARIABLES = frozenset(
    {"any", "client", "envtest", "eventually", "log", "mgr", "reconcile", "reconciled", "reconciler",
     "request", "seen", "self"}
)  # fmt: skip

# k8s.io/apiserver's RequestInfoFactory: /namespaces/<ns>/<these> are the Namespace's own subresources.
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})

# The line length of the generated project's ruff configuration (templates/init/.../pyproject.toml).

InsertionOp = Literal["statement", "entry", "enable", "env"]

ROLE_VERBS = {
    "admin": ["'*'"],
    "editor": ["create", "delete", "get", "list", "patch", "update", "watch"],
    "viewer": ["get", "list", "watch"],
}


@dataclass(frozen=True)
class ApiOptions:
    group: str
    version: str
    kind: str
    resource: bool = True
    controller: bool = True
    namespaced: bool = True
    plural: str | None = None
    force: bool = False
    external_api_path: str | None = None
    external_api_domain: str | None = None
    external_api_module: str | None = None
    controller_name: str | None = None
    """Names the controller (and its module and reconciler) when a kind has several."""
    deploy_image: deployimage.DeployImage | None = None
    """`--image`: the controller runs this image in a Deployment (kubebuilder's deploy-image plugin)."""


def _refuse_reserved(
    kind: str, kinds: Collection[str], variables: Collection[str], flag: str, code: str
) -> None:
    """A kind whose class or variable name would shadow a name the scaffolded code uses."""
    if kind in kinds:
        raise ValidationError(
            f"invalid kind {kind!r}{flag}: it would shadow a name the scaffolded {code} imports "
            f"({', '.join(sorted(kinds))})"
        )
    if _snake(kind) in variables:
        raise ValidationError(
            f"invalid kind {kind!r}{flag}: its variable {_snake(kind)!r} would shadow a name the "
            f"scaffolded controller or its test uses ({', '.join(sorted(variables))})"
        )


def validate_inputs(options: ApiOptions, domain: str) -> str:
    """Check the flags on their own; returns the plural. Raises ValidationError."""
    names.validate_group(options.group, domain)
    names.validate_version(options.version)
    names.validate_kind(options.kind)
    _refuse_reserved(options.kind, RESERVED_KINDS, RESERVED_VARIABLES, "", "code")
    plural = (
        names.validate_plural(options.plural) if options.plural is not None else names.pluralize(options.kind)
    )
    if options.namespaced and plural in NAMESPACE_SUBRESOURCES:
        raise ValidationError(
            f"invalid plural {plural!r} for a namespaced kind: the API server reads "
            f"/namespaces/<namespace>/{plural} as a subresource of the Namespace, so no request could reach "
            f"the kind; pass --plural (for example --plural {plural}es)"
        )
    if not options.resource and not options.controller:
        raise ValidationError("nothing to scaffold: --no-resource and --no-controller were both given")
    if options.group == "" and options.resource:
        raise ValidationError(
            "invalid group '': the core group holds only built-in kinds; "
            "a new kind (--resource) needs a group"
        )
    if options.deploy_image is not None and not (options.resource and options.controller):
        raise ValidationError(
            f"--image needs --resource and --controller: it scaffolds the {options.kind} types and the "
            "controller that deploys the image, together"
        )
    if options.deploy_image is not None:
        _validate_deploy_image(options)
    if options.controller_name is not None:
        names.validate_dns1123_label(options.controller_name, "controller name")
    if (options.external_api_domain or options.external_api_module) and not options.external_api_path:
        raise ValidationError("--external-api-domain and --external-api-module need --external-api-path")
    return plural


# What the --image controller and its test import or bind besides the names above.
DEPLOY_IMAGE_RESERVED_KINDS = frozenset(
    {"Capabilities", "Container", "ContainerPort", "Deployment", "DeploymentSpec", "Event", "LabelSelector",
     "PodSecurityContext", "PodSpec", "PodTemplateSpec", "SeccompProfile", "SecurityContext", "Workloads"}
)  # fmt: skip
DEPLOY_IMAGE_RESERVED_VARIABLES = frozenset(
    {"container", "controllerutil", "current", "deployment", "image", "image_version", "labels", "name",
     "owner", "pod", "set_condition", "size", "timedelta"}
)  # fmt: skip


def _validate_deploy_image(options: ApiOptions) -> None:
    if options.external_api_path:
        raise ValidationError("--image scaffolds a kind of this project: not with --external-api-path")
    if not options.namespaced:
        raise ValidationError(
            f"--image needs a namespaced kind: the Deployment it owns lives in the {options.kind}'s namespace"
        )
    _refuse_reserved(
        options.kind,
        DEPLOY_IMAGE_RESERVED_KINDS,
        DEPLOY_IMAGE_RESERVED_VARIABLES,
        " with --image",
        "controller",
    )


def _snake(kind: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", kind).lower()


def _pascal(module: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in module.split("_"))


def build_context(options: ApiOptions, project: Project, plural: str, header: str) -> dict[str, Any]:
    """Every name the api templates use, computed once."""
    resource = Resource(
        group=options.group, version=options.version, kind=options.kind, domain=project.domain
    )
    qualified_group = resource.qualified_group()
    group_module = names.group_module_name(options.group)
    group_label = options.group.split(".")[0]
    kind_lower = options.kind.lower()
    recorded = project.find(options.group, options.version, options.kind)
    api_module = project.api_module(recorded if recorded is not None else resource)
    controllers_module = f"{project.package}.controllers"
    if project.multigroup:
        controllers_module = f"{controllers_module}.{group_module}"
    controller_module = f"{controllers_module}.{kind_lower}_controller"
    multigroup = project.multigroup
    var = _snake(options.kind)
    get_args = f"{options.kind}, request.name" + (
        ", namespace=request.namespace" if options.namespaced else ""
    )
    stem = options.controller_name.replace("-", "_") if options.controller_name else None
    if stem is not None:
        controller_module = f"{controllers_module}.{stem}_controller"
    reconciler = f"{_pascal(stem)}Reconciler" if stem else f"{options.kind}Reconciler"
    test_stem = f"{group_module}_{stem or kind_lower}" if multigroup else (stem or kind_lower)
    return {
        "reconciler": reconciler,
        "get_args": get_args,
        "header": header,
        "package": project.package,
        "project_name": project.project_name,
        # a namespaced project (init --namespaced) gets a Role in its own namespace, like kubebuilder
        "rbac_scope": f",namespace={project.project_name}-system" if project.namespaced else "",
        "domain": project.domain,
        "group": options.group,
        "group_module": group_module,
        "qualified_group": qualified_group,
        "version": options.version,
        "api_version": f"{qualified_group}/{options.version}",
        "kind": options.kind,
        "kind_lower": kind_lower,
        "a_kind": f"an {options.kind}" if options.kind[0] in "AEIOU" else f"a {options.kind}",
        "var": var,
        "plural": plural,
        "namespaced": options.namespaced,
        "multigroup": multigroup,
        "api_module": api_module,
        "api_dir": "src/" + api_module.replace(".", "/"),
        "controllers_module": controllers_module,
        "controller_module": controller_module,
        "controller_path": "src/" + controller_module.replace(".", "/") + ".py",
        "reconciler_import": f"{_pascal(group_module)}{reconciler}" if multigroup else reconciler,
        "controller_name": (
            options.controller_name or (f"{group_label}-{kind_lower}" if multigroup else kind_lower)
        ),
        "recorder_name": (
            f"{options.controller_name}-controller"
            if options.controller_name
            else f"{group_label}-{kind_lower}-controller"
            if multigroup
            else f"{kind_lower}-controller"
        ),
        "test_path": f"tests/test_{test_stem}_controller.py",
        "sample_name": f"{options.group}_{options.version}_{kind_lower}.yaml",
        "role_prefix": f"{group_label}-{kind_lower}" if multigroup else kind_lower,
        "role_file_prefix": f"{group_module}_{kind_lower}" if multigroup else kind_lower,
        "crd_file": f"bases/{qualified_group}_{plural}.yaml",
    }


@dataclass
class _Planner:
    plan: FilePlan
    force: bool
    clashes: list[str]
    owned: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    insertions: list[Insertion] = field(default_factory=list)

    def new(self, relpath: str, content: str) -> None:
        """A file this API owns: an existing different file is a clash unless --force."""
        current = self.plan.read_current(relpath)
        if current is not None and current != content and not self.force:
            self.clashes.append(relpath)
        self.plan.write(relpath, content)
        self.owned.append(relpath)

    def ensure(self, relpath: str, content: str) -> None:
        """A shared file created once (package __init__, kustomization): never overwritten."""
        if self.plan.read_current(relpath) is None:
            self.plan.write(relpath, content)
            self.created.append(relpath)

    def edit(self, relpath: str, change: Callable[[str], str]) -> None:
        """Change a shared file without recording it (`create webhook`: delete api refuses webhooks)."""
        current = self.plan.read_current(relpath)
        if current is None:
            raise ProjectError(f"cannot edit {relpath}: the file is missing (was it made by `pyop init`?)")
        self.plan.write(relpath, change(current))

    def insert(self, relpath: str, op: InsertionOp, text: str, change: Callable[[str], str]) -> None:
        """Put `text` into a shared file with `change`, and record it for `pyop delete api`."""
        current = self.plan.read_current(relpath)
        if current is None:
            raise ProjectError(f"cannot edit {relpath}: the file is missing (was it made by `pyop init`?)")
        updated = change(current)
        self.insertions.append(Insertion(file=relpath, op=op, text=text, changed=updated != current))
        self.plan.write(relpath, updated)

    def record(self, group: str, version: str, kind: str, generated: list[str]) -> ApiRecord:
        """What this run added, from the final (formatted) plan."""
        files = self.plan.files
        mine = [i for i in self.insertions if i.changed]
        created = {}
        for relpath in self.created:
            text = files[relpath].decode("utf-8")
            for insertion in mine:
                if insertion.file == relpath:
                    text = insertion.revert(text)
            created[relpath] = digest(text)
        return ApiRecord(
            group=group,
            version=version,
            kind=kind,
            files={relpath: digest(files[relpath]) for relpath in self.owned},
            created=created,
            generated=generated,
            insertions=self.insertions,
        )


def _package_inits(planner: _Planner, ctx: dict[str, Any], module: str, docstrings: dict[str, str]) -> None:
    """`__init__.py` for every package from `<pkg>.<x>` down to (not including) `module`."""
    parts = module.split(".")
    for depth in range(2, len(parts)):
        dotted = ".".join(parts[:depth])
        docstring = docstrings.get(parts[depth - 1], f"The {parts[depth - 1]} package.")
        content = render("api/package_init.py.jinja", {"header": ctx["header"], "docstring": docstring})
        planner.ensure("src/" + dotted.replace(".", "/") + "/__init__.py", content)


def other_kind(options: ApiOptions) -> OtherKind | None:
    """The built-in or external kind the options name, or None for a kind of this project."""
    if options.external_api_path:
        plural = names.validate_plural(options.plural) if options.plural else names.pluralize(options.kind)
        return external_kind(
            options.group,
            options.version,
            options.kind,
            path=options.external_api_path,
            domain=options.external_api_domain,
            module=options.external_api_module,
            plural=plural,
            namespaced=options.namespaced,
        )
    # kubebuilder: a core group names the built-in kinds only without --resource; with it, `batch` is
    # the project's own group batch.<domain> (the CronJob tutorial)
    if is_core(options.group) and not options.resource:
        return core_kind(options.group, options.version, options.kind)
    return None


def _own(resource: Resource) -> bool:
    return not resource.core and not resource.external


def plan_api(options: ApiOptions, root: Path, project: Project) -> tuple[FilePlan, Project]:
    plural = validate_inputs(options, project.domain)
    other = other_kind(options)
    own = project.find(options.group, options.version, options.kind)
    if other is not None and other.core and own is not None and _own(own):
        other = None  # --resource=false adds a controller to the project's own batch.<domain> CronJob
    if other is not None:
        return _plan_other(options, other, root, project)
    if project.multigroup:
        module = names.group_module_name(options.group)
        if not module.isidentifier() or keyword.iskeyword(module):
            raise ValidationError(
                f"invalid group {options.group!r}: in a multigroup project its first label names the Python "
                f"packages api/{module}/ and controllers/{module}/, so {module!r} must be a valid identifier "
                "(not starting with a digit) and not a Python keyword"
            )
        clash = sorted(
            r.group for r in project.resources
            if _own(r) and r.group != options.group and names.group_module_name(r.group) == module
        )  # fmt: skip
        if clash:
            raise ProjectError(
                f"cannot add group {options.group!r}: its Python packages api/{module}/ and "
                f"controllers/{module}/ already hold group {clash[0]!r} (a group's package is named after "
                "its first label); choose a group whose first label differs"
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
        if options.controller and existing.controller and not options.resource:
            raise ProjectError(
                f"the controller for {options.group}/{options.version}, Kind={options.kind} already exists; "
                "pass --force to overwrite it"
            )
    if options.controller and not options.force and options.controller_name is None:
        # a kind has one controller (its file is named after the kind, not the version)
        sibling = next(
            (r for r in project.resources
             if r.controller and (r.group, r.kind) == (options.group, options.kind)
             and r.version != options.version),
            None,
        )  # fmt: skip
        if sibling is not None:
            raise ProjectError(
                f"kind {options.kind} of group {options.group} already has a controller (for version "
                f"{sibling.version}); to add version {options.version} of its API pass --no-controller, "
                "or pass --force to replace that controller"
            )
    ctx = build_context(options, project, plural, project_header(root))
    if options.deploy_image is not None:
        ctx.update(_deploy_image_context(options.deploy_image, options.kind))
    planner = _Planner(FilePlan(root), options.force, [])
    api_dir = ctx["api_dir"]
    types_path = f"{api_dir}/{ctx['kind_lower']}_types.py"
    if not options.resource and not (root / types_path).is_file():
        raise ProjectError(
            f"no API types for {options.group}/{options.version}, Kind={options.kind} "
            f"({types_path} is missing): "
            "pass --resource to create them"
        )
    docstrings = {"api": f"The API types of {project.project_name}, one package per version.",
                  "controllers": f"The controllers of {project.project_name}."}  # fmt: skip
    if options.resource:
        _plan_resource(planner, ctx, types_path, docstrings)
    if options.controller:
        # the test creates the sample when there is one (a controller added later to an API whose
        # sample the user removed builds the object in code)
        ctx["from_sample"] = options.resource or (root / "config/samples" / ctx["sample_name"]).is_file()
        if options.deploy_image is not None:
            _plan_controller(
                planner,
                ctx,
                docstrings,
                controller_template="api/deployimage_controller.py.jinja",
                test_template="api/deployimage_controller_test.py.jinja",
            )
            _add_manager_env(planner, ctx)
        else:
            _plan_controller(planner, ctx, docstrings)
    if planner.clashes:
        more = f" (and {len(planner.clashes) - 1} more)" if len(planner.clashes) > 1 else ""
        raise ProjectError(f"{planner.clashes[0]} already exists{more}; pass --force to overwrite")
    updated = _updated_project(project, options, plural, ctx)
    planner.plan.write(PROJECT_FILE, updated.dump())
    format_python(planner.plan)
    generated = [f"config/crd/{ctx['crd_file']}"] if options.resource else []
    _write_record(planner, planner.record(options.group, options.version, options.kind, generated))
    return planner.plan, updated


def _write_record(planner: _Planner, api: ApiRecord) -> None:
    record = load_record(planner.plan.read_current(RECORD_FILE))
    planner.plan.write(RECORD_FILE, record.with_api(api).dump())


def _plan_other(
    options: ApiOptions, other: OtherKind, root: Path, project: Project
) -> tuple[FilePlan, Project]:
    """A controller for a built-in or external kind: no types, sample, roles or CRD (like kubebuilder)."""
    what = "a built-in" if other.core else "an external"
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
    if existing is not None and existing.controller and not options.force and options.controller_name is None:
        raise ProjectError(
            f"the controller for {other.group}/{other.version}, Kind={other.kind} already exists; pass "
            "--force to overwrite it, or --controller-name to add another"
        )
    scoped = replace(options, group=other.group, namespaced=other.namespaced)
    ctx = build_context(scoped, project, other.plural, project_header(root))
    ctx.update(
        api_module=other.module,
        qualified_group=other.qualified_group or "core",  # RBAC markers name the core group `core`
        api_version=f"{other.qualified_group}/{other.version}".lstrip("/"),
    )
    planner = _Planner(FilePlan(root), options.force, [])
    docstrings = {"controllers": f"The controllers of {project.project_name}."}
    _plan_controller(planner, ctx, docstrings, test_template="api/other_controller_test.py.jinja")
    if planner.clashes:
        more = f" (and {len(planner.clashes) - 1} more)" if len(planner.clashes) > 1 else ""
        raise ProjectError(f"{planner.clashes[0]} already exists{more}; pass --force to overwrite")
    updated = project.model_copy(deep=True)
    listed = updated.find(other.group, other.version, other.kind)
    if listed is None:
        updated.resources.append(
            Resource(
                controller=True,
                core=True if other.core else None,
                external=None if other.core else True,
                domain=other.domain,
                group=other.group,
                kind=other.kind,
                path=other.path,
                plural=None if other.core or other.plural == names.pluralize(other.kind) else other.plural,
                version=other.version,
            )
        )
    else:
        listed.controller = True
    planner.plan.write(PROJECT_FILE, updated.dump())
    format_python(planner.plan)
    _write_record(planner, planner.record(other.group, other.version, other.kind, []))
    return planner.plan, updated


def _plan_resource(
    planner: _Planner, ctx: dict[str, Any], types_path: str, docstrings: dict[str, str]
) -> None:
    api_dir = ctx["api_dir"]
    _package_inits(planner, ctx, ctx["api_module"], docstrings)
    planner.ensure(f"{api_dir}/groupversion_info.py", render("api/groupversion_info.py.jinja", ctx))
    planner.ensure(f"{api_dir}/__init__.py", render("api/version_init.py.jinja", ctx))
    prefix = "deployimage_" if ctx.get("deploy_image") else ""
    planner.new(types_path, render(f"api/{prefix}types.py.jinja", ctx))
    _register_kind(planner, ctx, f"{api_dir}/__init__.py")
    planner.new(f"config/samples/{ctx['sample_name']}", render(f"api/{prefix}sample.yaml.jinja", ctx))
    planner.ensure("config/samples/kustomization.yaml", render("api/samples_kustomization.yaml.jinja", ctx))
    _add_entry(planner, "config/samples/kustomization.yaml", ctx["sample_name"], "samples")
    for role, verbs in ROLE_VERBS.items():
        filename = f"{ctx['role_file_prefix']}_{role}_role.yaml"
        planner.new(
            f"config/rbac/{filename}", render("api/role.yaml.jinja", {**ctx, "role": role, "verbs": verbs})
        )
        _add_entry(planner, "config/rbac/kustomization.yaml", filename, "rbac-roles")
    planner.ensure("config/crd/kustomization.yaml", render("api/crd_kustomization.yaml.jinja", ctx))
    _add_entry(planner, "config/crd/kustomization.yaml", ctx["crd_file"], "crdkustomizeresource")
    where = "config/default/kustomization.yaml"
    planner.insert(
        where, "enable", "../crd", lambda text: edits.enable_list_entry(text, "../crd", where=where)
    )


def _add_entry(planner: _Planner, where: str, entry: str, marker_name: str) -> None:
    planner.insert(
        where,
        "entry",
        entry,
        lambda text: edits.add_list_entry(text, entry, where=where, marker_name=marker_name),
    )


def _register_kind(planner: _Planner, ctx: dict[str, Any], where: str) -> None:
    kind = ctx["kind"]
    module = f"{ctx['api_module']}.{ctx['kind_lower']}_types"
    import_line = f"from {module} import {kind}, {kind}Spec, {kind}Status"
    planner.insert(
        where,
        "statement",
        import_line,
        lambda text: edits.insert_sorted(
            text, "imports", import_line, where=where, sort_key=edits.import_sort_key
        ),
    )
    for name in (kind, f"{kind}Spec", f"{kind}Status"):
        entry = f'"{name}",'
        planner.insert(
            where, "statement", entry, functools.partial(_insert_all_entry, entry=entry, where=where)
        )


def _insert_all_entry(text: str, *, entry: str, where: str) -> str:
    return edits.insert_sorted(text, "all", entry, where=where, sort_key=edits.dunder_all_sort_key)


def _plan_controller(
    planner: _Planner,
    ctx: dict[str, Any],
    docstrings: dict[str, str],
    test_template: str = "api/controller_test.py.jinja",
    controller_template: str = "api/controller.py.jinja",
) -> None:
    _package_inits(planner, ctx, ctx["controller_module"], docstrings)
    planner.new(ctx["controller_path"], render(controller_template, ctx))
    planner.new(ctx["test_path"], render(test_template, ctx))
    main_path = f"src/{ctx['package']}/__main__.py"
    reconciler = ctx["reconciler"]
    alias = ctx["reconciler_import"]
    imported = reconciler if alias == reconciler else f"{reconciler} as {alias}"
    import_line = f"from {ctx['controller_module']} import {imported}"
    registration = [
        f"{alias}(",
        "    client=mgr.client,",
        f'    recorder=mgr.get_event_recorder_for("{ctx["recorder_name"]}"),',
        ").setup_with_manager(mgr)",
    ]

    first_party = f"from {ctx['package']}."
    planner.insert(
        main_path,
        "statement",
        import_line,
        lambda text: edits.insert_sorted(
            text,
            "imports",
            import_line,
            where=main_path,
            sort_key=edits.import_sort_key,
            belongs=lambda line: line.startswith(first_party),
        ),
    )
    planner.insert(
        main_path,
        "statement",
        "\n".join(registration),
        lambda text: edits.insert_at_marker(text, "controllers", registration, where=main_path),
    )


def _deploy_image_context(deploy: deployimage.DeployImage, kind: str) -> dict[str, Any]:
    return {
        "deploy_image": True,
        "image": deploy.image,
        "image_env": deploy.env_var(kind),
        "image_command": list(deploy.command),
        "container_port": deploy.port,
        "run_as_user": deploy.run_as_user,
    }


def _add_manager_env(planner: _Planner, ctx: dict[str, Any]) -> None:
    """The image's env var in the manager container, read by the controller (kubebuilder does this too)."""
    name, image = ctx["image_env"], ctx["image"]
    planner.insert(
        deployimage.MANAGER_YAML,
        "env",
        f"{name}={image}",
        lambda text: deployimage.add_env(text, name, image),
    )


def _updated_project(project: Project, options: ApiOptions, plural: str, ctx: dict[str, Any]) -> Project:
    updated = project.model_copy(deep=True)
    resource = updated.find(options.group, options.version, options.kind)
    if resource is None:
        resource = Resource(
            group=options.group, version=options.version, kind=options.kind, domain=project.domain
        )
        updated.resources.append(resource)
    resource.domain = project.domain
    resource.path = ctx["api_module"]
    if options.resource:
        resource.api = ResourceAPI(crd_version="v1", namespaced=options.namespaced)
        # like kubebuilder, the plural is recorded only when it differs from the computed one
        resource.plural = plural if plural != names.pluralize(options.kind) else None
    resource.controller = resource.controller or options.controller
    return updated


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


def create_api(options: ApiOptions, start: Path) -> tuple[Path, list[str]]:
    """`pyop create api` from `start` (the project folder): returns the project root and the files written."""
    from pyscaffold_op.project import find_project_root

    root = find_project_root(start.resolve())
    # the flags are checked before the folder, so a bad name is reported even outside a project
    validate_inputs(options, "")
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run `pyop init` first")
    project = load_project(root)
    plan, _ = plan_api(options, root, project)
    return root, apply(plan)
