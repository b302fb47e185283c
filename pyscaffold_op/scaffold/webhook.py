"""`pyop create webhook`: defaulting, validation and conversion webhooks for an existing API, like
`kubebuilder create webhook`. Validate, plan every new file and edit in memory, then apply atomically.

Writes `src/<pkg>/webhooks/<version>/<kind>_webhook.py` and `tests/test_<kind>_webhook.py`, registers
the webhooks in `__main__.py` (with `--webhook-port`/`--webhook-cert-path`), records them in PROJECT,
and turns on the kustomize pieces: config/webhook, config/certmanager, the manager's webhook patch and
cert-manager CA injection in config/default, the webhook NetworkPolicy, and for `--conversion` the CRD
patch, the Hub mixin and `+kubebuilder:storageversion` on the hub and a conversion mixin on each spoke.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from pyscaffold_op import names
from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import PROJECT_FILE, Project, Resource, ResourceWebhooks, load_project
from pyscaffold_op.scaffold import edits, pysource
from pyscaffold_op.scaffold.boilerplate import project_header
from pyscaffold_op.scaffold.external_model import plan_external_model
from pyscaffold_op.scaffold.inputs import WebhookOptions, validate_webhook
from pyscaffold_op.scaffold.journal import ADMISSION, RECORD_FILE, Need, digest, load_record
from pyscaffold_op.scaffold.otherapi import OtherKind, core_kind, external_kind, is_core
from pyscaffold_op.scaffold.planner import Planner
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.resource import ResourceNames, resource_names
from pyscaffold_op.scaffold.transaction import FilePlan, apply, read_file

# Where config/default/manager_webhook_patch.yaml mounts the certificate (kubebuilder's path).
CERT_PATH = "/tmp/k8s-webhook-server/serving-certs"


_POD_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "sample"}},
    "spec": {"containers": [{"name": "app", "image": "nginx"}]},
}
_WORKLOAD = {"selector": {"matchLabels": {"app": "sample"}}, "template": _POD_TEMPLATE}
_JOB_TEMPLATE = {"spec": {**_POD_TEMPLATE["spec"], "restartPolicy": "Never"}}
# What the scaffolded test of a built-in kind's webhooks sends besides metadata: the least the API
# server admits (a kind not listed here is sent with metadata only).
CORE_SAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("core", "Pod"): {"spec": _POD_TEMPLATE["spec"]},
    ("core", "ReplicationController"): {"spec": {"selector": {"app": "sample"}, "template": _POD_TEMPLATE}},
    ("core", "Service"): {"spec": {"ports": [{"port": 80}]}},
    ("core", "ConfigMap"): {"data": {"key": "value"}},
    ("core", "Secret"): {"stringData": {"key": "value"}},
    ("apps", "Deployment"): {"spec": _WORKLOAD},
    ("apps", "ReplicaSet"): {"spec": _WORKLOAD},
    ("apps", "DaemonSet"): {"spec": _WORKLOAD},
    ("apps", "StatefulSet"): {"spec": {**_WORKLOAD, "serviceName": "sample"}},
    ("batch", "Job"): {"spec": {"template": _JOB_TEMPLATE}},
    ("batch", "CronJob"): {
        "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE}}}
    },
}


def builtin_kind(group: str, version: str, kind: str, resource: Resource | None) -> OtherKind | None:
    """The built-in kind (`core/v1 Pod`, `apps/v1 Deployment`) whose webhooks `create webhook` scaffolds
    without `create api`, as kubebuilder does; None for the project's own kinds. ValidationError when a
    core group has no such kind among pyscaffold_op.models."""
    if resource is not None:
        return core_kind(group, version, kind) if resource.core else None
    return core_kind(group, version, kind) if is_core(group) else None


def other_kind_of(
    project: Project, group: str, version: str, kind: str, options: WebhookOptions | None = None
) -> OtherKind | None:
    """The built-in or external kind whose webhooks `create webhook` scaffolds without `create api`
    (None for the project's own kinds): an external kind as PROJECT records it, or as `options`
    name it (`--external-api-path`, kubebuilder's flags) when PROJECT does not list it yet."""
    resource = project.find(group, version, kind)
    domain: str | None
    if resource is not None and resource.external:
        path, domain, module = resource.path, resource.domain, resource.module
    elif resource is None and options is not None and options.external_api_path:
        path, domain = options.external_api_path, options.external_api_domain
        module = options.external_api_module
    else:
        return builtin_kind(group, version, kind, resource)
    plural = (resource.plural if resource else None) or (options.plural if options else None)
    return external_kind(
        group,
        version,
        kind,
        path=path,
        domain=domain,
        module=module,
        plural=plural or names.pluralize(kind),
        namespaced=True,  # PROJECT records no scope for external kinds; the webhooks need none
        package=project.package,
    )


_WEBHOOK_RESOURCES = """\
# [WEBHOOK] `pyop create webhook` turns on the webhook Service and configurations.
- ../webhook
# [CERTMANAGER] cert-manager issues the webhook's certificate and injects its CA (needs cert-manager
# installed in the cluster); the replacements below fill in the names.
- ../certmanager
"""


def _default_kustomization(text: str, r: ResourceNames, flags: dict[str, bool], where: str) -> str:
    """Turn on ../webhook, ../certmanager, the manager webhook patch and cert-manager's CA injection."""
    anchor = "- ../manager\n"
    if "- ../webhook\n" not in text and anchor in text:
        text = text.replace(anchor, anchor + _WEBHOOK_RESOURCES, 1)
    text = edits.enable_list_entry(text, "../webhook", where=where)
    text = edits.enable_list_entry(text, "../certmanager", where=where)
    data = edits.load_round_trip(text)
    patches = edits.list_of(data, "patches")
    if not any(isinstance(p, dict) and p.get("path") == "manager_webhook_patch.yaml" for p in patches):
        patches.append({"path": "manager_webhook_patch.yaml", "target": {"kind": "Deployment"}})
    replacements = edits.list_of(data, "replacements")
    for item in _replacements(r, flags):
        if item not in replacements:
            replacements.append(copy.deepcopy(item))  # shared dicts would be dumped as YAML anchors
    return edits.dump_round_trip(data)


def _select(kind: str, **extra: str) -> dict[str, Any]:
    return {"kind": kind, **extra}


def _replacement(
    source: dict[str, Any], select: dict[str, Any], paths: list[str], delimiter: str, index: int
) -> dict[str, Any]:
    return {
        "source": source,
        "targets": [
            {
                "select": select,
                "fieldPaths": paths,
                "options": {"delimiter": delimiter, "index": index, "create": True},
            }
        ],
    }


def _replacements(r: ResourceNames, flags: dict[str, bool]) -> list[dict[str, Any]]:
    """kubebuilder's cert-manager replacements: the Service's name and namespace into the Certificate's
    DNS names, the Certificate's `namespace/name` into each webhook configuration's (and converted
    CRD's) `cert-manager.io/inject-ca-from` annotation."""
    svc = {"kind": "Service", "version": "v1", "name": "webhook-service"}
    cert = _select("Certificate", group="cert-manager.io", version="v1", name="serving-cert")
    dns = [".spec.dnsNames.0", ".spec.dnsNames.1"]
    inject = [".metadata.annotations.[cert-manager.io/inject-ca-from]"]
    out = [
        _replacement({**svc, "fieldPath": ".metadata.name"}, cert, dns, ".", 0),
        _replacement({**svc, "fieldPath": ".metadata.namespace"}, cert, dns, ".", 1),
    ]
    cert_src = {"kind": "Certificate", "group": "cert-manager.io", "version": "v1", "name": "serving-cert"}
    targets = []
    if flags["defaulting"]:
        targets.append(_select("MutatingWebhookConfiguration"))
    if flags["validation"]:
        targets.append(_select("ValidatingWebhookConfiguration"))
    if flags["conversion"]:
        targets.append(_select("CustomResourceDefinition", name=f"{r.plural}.{r.qualified_group}"))
    for select in targets:
        out.append(_replacement({**cert_src, "fieldPath": ".metadata.namespace"}, select, inject, "/", 0))
        out.append(_replacement({**cert_src, "fieldPath": ".metadata.name"}, select, inject, "/", 1))
    return out


def _main_server(text: str, where: str) -> str:
    """The webhook server and its flags, shared by every webhook of the project."""
    if "WebhookServer(" in text:
        return text
    if "run_manager(" in text:  # the flags are run_manager's (pyscaffold_op.runtime.manager.cmd)
        flags = "flags"
    else:  # a __main__.py of an older pyop, with its own argparse flags
        flags = "args"
        args = [
            "    parser.add_argument(",
            '        "--webhook-port",',
            "        type=int,",
            "        default=9443,",
            '        help="The port the webhook server binds to.",',
            "    )",
            "    parser.add_argument(",
            '        "--webhook-cert-path",',
            f'        default="{CERT_PATH}",',
            '        help="Folder holding tls.crt and tls.key for the webhook server (reloaded when they "',
            '        "change). When it has none (make run), a local CA and certificate are written there: "',
            '        "trust its ca.crt.",',
            "    )",
        ]
        anchor = "    return parser.parse_args(argv)\n"
        if anchor not in text:
            raise ProjectError(f"cannot add the webhook flags to {where}: `{anchor.strip()}` is missing")
        text = text.replace(anchor, "\n".join(args) + "\n" + anchor, 1)
    # beside the runtime import (wrapped in brackets once it is long); ruff sorts the block
    m = re.search(r"^from pyscaffold_op\.runtime import (\([^)]*\)|.*)\n", text, re.MULTILINE)
    if m is None:
        raise ProjectError(
            f"cannot add the webhook server to {where}: it does not import pyscaffold_op.runtime"
        )
    new_import = "from pyscaffold_op.runtime.webhook import WebhookServer\n"
    text = text[: m.end()] + new_import + text[m.end() :]
    server = [
        "mgr.webhook_server = WebhookServer("
        f"port={flags}.webhook_port, cert_dir={flags}.webhook_cert_path, generate_missing=True)"
    ]
    return pysource.insert_at_marker(text, "controllers", server, where=where)


def _main_py(text: str, r: ResourceNames, where: str) -> str:
    """The kind's `setup_<kind>_webhook_with_manager(mgr)` registered in `setup`. Every version (and in a
    multigroup project every group) of a kind has a function of that name, so a second one is imported
    under an alias naming its version (and group): `setup_cron_job_v2_webhook_with_manager`."""
    setup = f"setup_{r.var}_webhook_with_manager"
    bound = pysource.imported_names(text)
    name = next((alias for alias, origin in bound.items() if origin == (r.webhook_module, setup)), None)
    if name is None:
        name = setup
        if name in bound:
            qualifier = f"{r.group_module}_{r.version}" if r.multigroup else r.version
            name = f"setup_{r.var}_{qualifier}_webhook_with_manager"
        imported = setup if name == setup else f"{setup} as {name}"
        text = pysource.insert_import(
            text, f"from {r.webhook_module} import {imported}", where=where, package=r.package
        )
    return pysource.insert_at_marker(text, "controllers", [f"{name}(mgr)"], where=where)


def keeps_scaffolded_foo(types_file: Path, kind: str) -> bool:
    """Whether `<Kind>Spec` still has the `foo: str | None` field `create api` scaffolds: the webhook
    examples use it while it is there, and are TODO comments once the user has written their own spec."""
    try:
        tree = ast.parse(types_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return False
    spec = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == f"{kind}Spec"), None)
    return spec is not None and any(
        isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and n.target.id == "foo"
        and ast.unparse(n.annotation).replace(" ", "") in ("str|None", "Optional[str]")
        for n in spec.body
    )


def webhook_names(
    project: Project, group: str, version: str, kind: str, root: Path, other: OtherKind | None = None
) -> ResourceNames:
    """The names of a kind PROJECT records, for its webhooks.

    The test of a kind's admission webhooks is `tests/test_<kind>_webhook.py`; once another version of
    the kind has admission webhooks, this version's is `tests/test_<kind>_<version>_webhook.py`. The
    path `.pyop-apis.yml` records for this version's test wins, so a test keeps its name.
    """
    resource = project.find(group, version, kind)
    other = other or other_kind_of(project, group, version, kind)
    assert resource is not None or other is not None
    others = [
        r for r in project.resources
        if (r.group, r.kind) == (group, kind) and r.version != version and r.webhooks
        and (r.webhooks.defaulting or r.webhooks.validation)
    ]  # fmt: skip
    r = resource_names(
        project,
        group=group,
        version=version,
        kind=kind,
        plural=(resource.plural if resource else None) or names.pluralize(kind),
        namespaced=resource.api.namespaced if resource and resource.api else True,
        header=project_header(root),
        other=other,
        recorded_domain=True,
        versioned_webhook_test=bool(others),
    )
    record = load_record(read_file(root, RECORD_FILE))
    recorded = [
        relpath for relpath, owned in record.webhooks.files.items()
        if relpath.startswith("tests/") and relpath != r.webhook_test_path
        and (owned.need.group, owned.need.version, owned.need.kind) == (group, version, kind)
    ]  # fmt: skip
    return replace(r, webhook_test_path=recorded[0]) if recorded else r


def _spokes(project: Project, r: ResourceNames, versions: tuple[str, ...]) -> list[dict[str, str]]:
    """The kind's spoke versions as the webhook file imports them: module and alias (`CronJobV2`)."""
    return [
        {"module": project.api_module(s), "alias": f"{r.kind}{s.version[:1].upper()}{s.version[1:]}"}
        for s in project.resources
        if (s.group, s.kind) == (r.group, r.kind) and s.version in versions and s.api
    ]


def webhook_files(
    options: WebhookOptions, held: dict[str, bool], r: ResourceNames, project: Project, root: Path
) -> dict[str, str]:
    """The kind's webhook file (and its test, for admission webhooks) holding the webhook types `held`."""
    resource = project.find(options.group, options.version, options.kind)
    other = other_kind_of(project, options.group, options.version, options.kind, options)
    core = other is not None  # a kind this project does not define: built-in or external
    external = other is not None and not other.core
    example = not core and keeps_scaffolded_foo(root / r.types_path, r.kind)
    runtime_imports = ["webhook_managed_by"]
    if options.validation and example:
        runtime_imports = ["FieldError", "ValidationError", *runtime_imports]
    # a webhook type added later keeps the custom path an earlier run recorded for the other one
    recorded = resource.webhooks if resource is not None else None
    defaulting_path = options.defaulting_path or (recorded.defaulting_path if recorded else None)
    validation_path = options.validation_path or (recorded.validation_path if recorded else None)
    if options.defaulting:  # re-created (--force): the path given now, or the default
        defaulting_path = options.defaulting_path
    if options.validation:
        validation_path = options.validation_path
    values = {
        **held,
        "spokes": _spokes(project, r, options.spokes),
        "example": example,
        "runtime_imports": ", ".join(runtime_imports),
        "defaulting_path": defaulting_path or r.mutate_path,
        "validation_path": validation_path or r.validate_path,
        "custom_defaulting_path": defaulting_path is not None,
        "custom_validation_path": validation_path is not None,
        "core": core,
        # the marker's groups: the core group is `""` (controller-gen's and kubebuilder's spelling)
        "webhook_groups": '""' if core and r.qualified_group == "core" else r.qualified_group,
        "external": external,
        "dict_spec": other is not None and other.placeholder,  # the placeholder model's spec is a dict
        "core_sample": repr(CORE_SAMPLES.get((options.group, options.kind), {"spec": {}})) if core else "",
    }
    out = {r.webhook_file: render("webhook/webhook.py.jinja", r, **values)}
    if held["defaulting"] or held["validation"]:
        out[r.webhook_test_path] = render("webhook/webhook_test.py.jinja", r, **values)
    return out


def plan_webhook(options: WebhookOptions, root: Path, project: Project) -> FilePlan:
    """The files and edits of `create webhook` for `options` in the project at `root`; changes nothing."""
    validate_webhook(options)
    return _plan(options, root, project)


def _plan(options: WebhookOptions, root: Path, project: Project) -> FilePlan:
    """`plan_webhook` for options already validated on their own."""
    resource = project.find(options.group, options.version, options.kind)
    builtin = other_kind_of(project, options.group, options.version, options.kind, options)
    if builtin is None and (resource is None or resource.api is None):
        raise ProjectError(
            f"no API {options.group}/{options.version}, Kind={options.kind} in {PROJECT_FILE}: "
            "run `pyop create api` for it first"
        )
    if builtin is not None:
        if options.conversion:
            raise ProjectError(
                f"--conversion: {builtin.group}/{builtin.version}, Kind={builtin.kind} is "
                f"{'a built-in' if builtin.core else 'an external'} kind; the API server (or the kind's "
                "own project) converts its versions"
            )
        if options.plural is not None and options.plural != builtin.plural:
            raise ProjectError(
                f"--plural {options.plural}: the plural of {builtin.group}/{builtin.version}, "
                f"Kind={builtin.kind} is {builtin.plural!r}"
            )
    elif resource is not None:
        plural = resource.plural or names.pluralize(options.kind)
        if options.plural is not None and options.plural != plural:
            raise ProjectError(
                f"--plural {options.plural}: the plural of {options.group}/{options.version}, "
                f"Kind={options.kind} is {plural!r} (in {PROJECT_FILE}, from `create api`"
                f"{' --plural' if resource.plural else ''}); the webhooks match the resource by it"
            )
    recorded = resource.webhooks if resource is not None else None
    if recorded is not None and not options.force:
        given = {
            "defaulting": options.defaulting,
            "validation": options.validation,
            "conversion": options.conversion,
        }
        again = [k for k, v in given.items() if v and getattr(recorded, k)]
        if again:
            raise ProjectError(
                f"the {', '.join(again)} webhook of {options.group}/{options.version}, Kind={options.kind} "
                "already exists; pass --force to overwrite it"
            )
    for spoke in options.spokes:
        other = project.find(options.group, spoke, options.kind)
        if other is None or other.api is None:
            raise ProjectError(
                f"--spoke {spoke}: no API {options.group}/{spoke}, Kind={options.kind} in {PROJECT_FILE}: "
                f"run `pyop create api --group {options.group} --version {spoke} --kind {options.kind} "
                "--no-controller` first"
            )
    hubs = [
        r.version for r in project.resources
        if (r.group, r.kind) == (options.group, options.kind) and r.webhooks and r.webhooks.conversion
        and r.version != options.version
    ]  # fmt: skip
    if options.conversion and hubs:
        raise ProjectError(
            f"kind {options.kind} already has a conversion hub ({hubs[0]}); a kind has one hub"
        )
    r = webhook_names(project, options.group, options.version, options.kind, root, builtin)
    planner = Planner(FilePlan(root), options.force)
    pristine = _pristine_files(planner.plan)
    g, v, k = options.group, options.version, options.kind
    anyone = Need()
    admission = Need(types=list(ADMISSION))
    mine = Need(group=g, version=v, kind=k)
    docstrings = {"webhooks": f"The webhooks of {project.project_name}, one package per version."}
    planner.package_inits(
        r.header, r.webhook_module, docstrings, lambda relpath: _init_need(relpath, project.multigroup, g)
    )
    if builtin is not None:
        plan_external_model(planner.plan, r, builtin)
    held = _merged_options(options, recorded)
    existing = planner.plan.read_current(r.webhook_file)
    if options.defaulting or options.validation or existing is None:
        edited = r.webhook_file not in pristine
        if existing is not None and recorded is not None and edited and not options.force:
            raise ProjectError(
                f"{r.webhook_file} was edited since pyop wrote it; pass --force to overwrite it"
            )
        for relpath, content in webhook_files(options, held, r, project, root).items():
            need = (
                mine if relpath == r.webhook_file else Need(group=g, version=v, kind=k, types=list(ADMISSION))
            )
            planner.new(relpath, content, need)
    else:  # a conversion added to an existing webhook file: register the spokes there
        spokes = _spokes(project, r, options.spokes)
        planner.rewrite(r.webhook_file, lambda t: _add_spokes(t, spokes, r), mine)
    main_py = f"src/{r.package}/__main__.py"
    planner.edit(main_py, lambda t: _main_server(t, "__main__.py"), anyone)
    planner.edit(main_py, lambda t: _main_py(t, r, "__main__.py"), mine)
    if held["defaulting"] or held["validation"]:
        planner.new("config/webhook/service.yaml", render("webhook/service.yaml.jinja", r), admission)
        planner.ensure(
            "config/webhook/kustomization.yaml", render("webhook/webhook_kustomization.yaml", r), admission
        )
        planner.ensure(
            "config/webhook/kustomizeconfig.yaml",
            render("webhook/webhook_kustomizeconfig.yaml", r),
            admission,
        )
    if options.conversion:
        _plan_conversion(planner, options, project, r)
    for relpath, template in (
        ("config/certmanager/issuer.yaml", "webhook/issuer.yaml.jinja"),
        ("config/certmanager/certificate-webhook.yaml", "webhook/certificate-webhook.yaml.jinja"),
        ("config/certmanager/certificate-metrics.yaml", "webhook/certificate-metrics.yaml.jinja"),
        ("config/certmanager/kustomization.yaml", "webhook/certmanager_kustomization.yaml"),
        ("config/certmanager/kustomizeconfig.yaml", "webhook/certmanager_kustomizeconfig.yaml"),
        ("config/default/manager_webhook_patch.yaml", "webhook/manager_webhook_patch.yaml.jinja"),
        ("config/network-policy/allow-webhook-traffic.yaml", "webhook/allow-webhook-traffic.yaml.jinja"),
    ):
        planner.ensure(relpath, render(template, r), anyone)
    policies = "config/network-policy/kustomization.yaml"
    planner.edit(
        policies, lambda t: edits.add_list_entry(t, "allow-webhook-traffic.yaml", where=policies), anyone
    )
    # one step per need, so each replacement is recorded with the webhooks that use it
    default = "config/default/kustomization.yaml"
    none = {"defaulting": False, "validation": False, "conversion": False}
    steps: list[tuple[dict[str, bool], Need]] = [(none, anyone)]
    if held["defaulting"]:
        steps.append(({**none, "defaulting": True}, Need(types=["defaulting"])))
    if held["validation"]:
        steps.append(({**none, "validation": True}, Need(types=["validation"])))
    if held["conversion"]:
        steps.append(({**none, "conversion": True}, Need(group=g, kind=k, types=["conversion"])))
    for flags, need in steps:
        step = functools.partial(_default_kustomization, r=r, flags=flags, where=default)
        planner.edit(default, step, need)
    # a file pyop wrote and nobody edited since is re-rendered freely (another webhook type added later)
    planner.refuse_clashes(unless=lambda relpath: relpath in pristine)
    planner.plan.write(PROJECT_FILE, _updated_project(project, options, builtin).dump())
    format_python(planner.plan)
    planner.write_webhook_record(g, v, k)
    return planner.plan


def _init_need(relpath: str, multigroup: bool, group: str) -> Need:
    """A webhooks package `__init__.py` is needed while a webhook lives under its folder."""
    below = relpath.split("/webhooks/", 1)[1].split("/")[:-1] if "/webhooks/" in relpath else []
    if multigroup and below:
        return Need(group=group, version=below[1] if len(below) > 1 else "")
    return Need(version=below[0] if below else "")


def _pristine_files(plan: FilePlan) -> set[str]:
    """The webhook files whose content is still what `create webhook` recorded writing."""
    record = load_record(plan.read_current(RECORD_FILE))
    return {
        relpath
        for relpath, owned in record.webhooks.files.items()
        if (text := plan.read_current(relpath)) is not None and digest(text) == owned.digest
    }


def _add_spokes(text: str, spokes: list[dict[str, str]], r: ResourceNames) -> str:
    """The spokes imported and given to the builder in `setup_<kind>_webhook_with_manager`: a line
    above the scaffold's `builder.complete()`, or `.with_spokes(...)` spliced before the `.complete()`
    of a chain as docs/webhooks.md writes it (`webhook_managed_by(mgr).for_(K)....complete()`)."""
    where = r.webhook_file
    aliases = ", ".join(s["alias"] for s in spokes)
    anchor = "    builder.complete()\n"
    if anchor in text:
        text = text.replace(anchor, f"    builder = builder.with_spokes({aliases})\n" + anchor, 1)
    else:
        text = pysource.splice_before_call(
            text, f"setup_{r.var}_webhook_with_manager", "complete", f".with_spokes({aliases})", where=where
        )
    for spoke in spokes:
        line = f"from {spoke['module']} import {r.kind} as {spoke['alias']}"
        text = pysource.add_import(text, line, where, r.package)
    return text


def _merged_options(options: WebhookOptions, recorded: ResourceWebhooks | None) -> dict[str, Any]:
    """What the webhook file holds after this run: earlier webhooks of the kind are kept."""

    def was(name: str) -> bool:
        return bool(recorded is not None and getattr(recorded, name))

    return {
        "defaulting": options.defaulting or was("defaulting"),
        "validation": options.validation or was("validation"),
        "conversion": options.conversion or was("conversion"),
    }


def _plan_conversion(planner: Planner, options: WebhookOptions, project: Project, r: ResourceNames) -> None:
    hub_path = r.types_path
    kind = options.kind
    mine = Need(group=options.group, version=options.version, kind=kind, types=["conversion"])
    of_kind = Need(group=options.group, kind=kind, types=["conversion"])

    def hub(text: str) -> str:
        text = pysource.add_base(text, kind, "Hub", hub_path, first=False)
        text = pysource.add_import(text, "from pyscaffold_op.runtime.webhook import Hub", hub_path, r.package)
        return pysource.mark_storage_version(text, kind, hub_path)

    planner.edit(hub_path, hub, mine)
    for spoke in options.spokes:
        resource = project.find(options.group, spoke, kind)
        assert resource is not None
        spoke_module = project.api_module(resource)
        spoke_dir = "src/" + spoke_module.replace(".", "/")
        conversion_module = f"{spoke_module}.{r.kind_lower}_conversion"
        planner.new(
            f"{spoke_dir}/{r.kind_lower}_conversion.py",
            render("webhook/conversion.py.jinja", r, spoke=spoke),
            mine,
        )
        types_path = f"{spoke_dir}/{r.kind_lower}_types.py"
        import_line = f"from {conversion_module} import {kind}Conversion"

        def spoke_edit(text: str, path: str = types_path, line: str = import_line) -> str:
            text = pysource.add_base(text, kind, f"{kind}Conversion", path, first=True)
            return pysource.add_import(text, line, path, r.package)

        planner.edit(types_path, spoke_edit, mine)
    patch = f"patches/webhook_in_{r.plural}.yaml"
    planner.new(f"config/crd/{patch}", render("webhook/webhook_in_crd.yaml.jinja", r), of_kind)
    conversions = Need(types=["conversion"])
    planner.ensure(
        "config/crd/kustomizeconfig.yaml", render("webhook/crd_kustomizeconfig.yaml", r), conversions
    )
    crd = "config/crd/kustomization.yaml"
    planner.edit(
        crd,
        lambda t: edits.add_list_entry(t, "kustomizeconfig.yaml", where=crd, key="configurations"),
        conversions,
    )

    def crd_kustomization(text: str) -> str:
        data = edits.load_round_trip(text)
        patches = edits.list_of(data, "patches")
        if not any(isinstance(p, dict) and p.get("path") == patch for p in patches):
            patches.append({"path": patch})
        return edits.dump_round_trip(data)

    planner.edit(crd, crd_kustomization, of_kind)


def _updated_project(project: Project, options: WebhookOptions, other: OtherKind | None) -> Project:
    updated = project.model_copy(deep=True)
    resource = updated.find(options.group, options.version, options.kind)
    if resource is None:  # recorded as kubebuilder records it (`core: true` or `external: true`)
        assert other is not None
        resource = Resource(
            core=True if other.core else None, external=None if other.core else True,
            domain=other.domain, group=other.group, kind=other.kind, module=other.recorded_module,
            path=other.path, version=other.version,
            plural=None if other.core or other.plural == names.pluralize(other.kind) else other.plural,
        )  # fmt: skip
        updated.resources.append(resource)
    hooks = resource.webhooks or ResourceWebhooks()
    if options.defaulting:
        hooks.defaulting = True
        hooks.defaulting_path = options.defaulting_path
    if options.validation:
        hooks.validation = True
        hooks.validation_path = options.validation_path
    if options.conversion:
        hooks.conversion = True
        hooks.spoke = sorted({*(hooks.spoke or []), *options.spokes})
    resource.webhooks = hooks
    return updated


def create_webhook(options: WebhookOptions, start: Path) -> tuple[Path, list[str]]:
    """`pyop create webhook` from `start`: returns the project root and the files written."""
    from pyscaffold_op.project import find_project_root

    validate_webhook(options)
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run `pyop init` first")
    return root, apply(_plan(options, root, load_project(root)))
