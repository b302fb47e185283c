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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.apimachinery.webhookpaths import mutate_path, validate_path
from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import PROJECT_FILE, Project, ResourceWebhooks, load_project
from pyscaffold_op.scaffold import edits, names
from pyscaffold_op.scaffold.api import _package_inits, _Planner, _snake
from pyscaffold_op.scaffold.boilerplate import project_header
from pyscaffold_op.scaffold.journal import RECORD_FILE, digest, load_record
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.transaction import FilePlan, apply
from pyscaffold_op.scaffold.webhook_record import ADMISSION, Change, Need, OwnedFile, WebhookKind, changes

# Where config/default/manager_webhook_patch.yaml mounts the certificate (kubebuilder's path).
CERT_PATH = "/tmp/k8s-webhook-server/serving-certs"


@dataclass(frozen=True)
class WebhookOptions:
    group: str
    version: str
    kind: str
    defaulting: bool = False
    validation: bool = False
    conversion: bool = False
    spokes: tuple[str, ...] = field(default_factory=tuple)
    defaulting_path: str | None = None
    validation_path: str | None = None
    force: bool = False


@dataclass
class _Log:
    """What this run adds, with what needs it, for the record `pyop delete webhook` reads."""

    planner: _Planner
    files: dict[str, Need] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    def new(self, relpath: str, content: str, need: Need) -> None:
        self.planner.new(relpath, content)
        self.files[relpath] = need

    def ensure(self, relpath: str, content: str, need: Need) -> None:
        if self.planner.plan.read_current(relpath) is None:
            self.files[relpath] = need
        self.planner.ensure(relpath, content)

    def edit(self, relpath: str, change: Callable[[str], str], need: Need) -> None:
        before = self.planner.plan.read_current(relpath)
        self.planner.edit(relpath, change)
        after = self.planner.plan.read_current(relpath)
        assert before is not None and after is not None
        self.changes.extend(changes(relpath, before, after, need))


def validate_inputs(options: WebhookOptions) -> None:
    names.validate_group(options.group, "")
    names.validate_version(options.version)
    names.validate_kind(options.kind)
    if not (options.defaulting or options.validation or options.conversion):
        raise ValidationError(
            "nothing to scaffold: pass --defaulting, --programmatic-validation and/or --conversion"
        )
    if options.spokes and not options.conversion:
        raise ValidationError("--spoke is only for --conversion")
    if options.conversion and not options.spokes:
        raise ValidationError("--conversion needs at least one --spoke version (e.g. --spoke v2)")
    for spoke in options.spokes:
        names.validate_version(spoke)
        if spoke == options.version:
            raise ValidationError(
                f"--spoke {spoke}: the hub version {options.version} cannot be its own spoke"
            )
    if options.defaulting_path is not None and not options.defaulting:
        raise ValidationError("--defaulting-path is only for --defaulting")
    if options.validation_path is not None and not options.validation:
        raise ValidationError("--validation-path is only for --programmatic-validation")
    for flag, path in (
        ("--defaulting-path", options.defaulting_path),
        ("--validation-path", options.validation_path),
    ):
        if path is not None and not re.fullmatch(r"/[A-Za-z0-9._~/-]*", path):
            raise ValidationError(f"{flag} {path!r}: must be a URL path starting with '/'")


def _class_line(text: str, kind: str, where: str) -> re.Match[str]:
    m = re.search(rf"^class {re.escape(kind)}\((?P<bases>[^)]*)\):[ \t]*$", text, re.MULTILINE)
    if m is None:
        raise ProjectError(f"cannot find `class {kind}(...)` in {where}")
    return m


def _add_base(text: str, kind: str, base: str, where: str, *, first: bool) -> str:
    m = _class_line(text, kind, where)
    bases = [b.strip() for b in m["bases"].split(",") if b.strip()]
    if base in bases:
        return text
    bases = [base, *bases] if first else [*bases, base]
    return text[: m.start()] + f"class {kind}({', '.join(bases)}):" + text[m.end() :]


def _add_import(text: str, line: str, where: str, first_party: str) -> str:
    """Add a one-line top-level `from x import y` in its isort section (third-party, or the project's
    own `first_party` package), sorted like ruff sorts it."""
    if line in text.splitlines():
        return text
    lines = text.splitlines(keepends=True)
    mine = line.startswith(f"from {first_party}.")
    section = [
        i
        for i, ln in enumerate(lines)
        if ln.startswith("from ") and " import " in ln and ln.startswith(f"from {first_party}.") == mine
        and not ln.startswith("from __future__")
    ]  # fmt: skip
    if not section:
        raise ProjectError(f"cannot add `{line}` to {where}: no import section to put it in")
    key = edits.import_sort_key(line)
    at = next((i for i in section if edits.import_sort_key(lines[i].rstrip("\n")) > key), None)
    if at is None:
        at = section[-1] + 1
        while lines[at - 1].rstrip().endswith("(") or (at < len(lines) and lines[at].startswith((" ", ")"))):
            at += 1  # after a wrapped import's closing line
    return "".join([*lines[:at], line + "\n", *lines[at:]])


def _mark_storage_version(text: str, kind: str, where: str) -> str:
    if "# +kubebuilder:storageversion" in text:
        return text
    m = _class_line(text, kind, where)
    return text[: m.start()] + "# +kubebuilder:storageversion\n" + text[m.start() :]


_WEBHOOK_RESOURCES = """\
# [WEBHOOK] `pyop create webhook` turns on the webhook Service and configurations.
- ../webhook
# [CERTMANAGER] cert-manager issues the webhook's certificate and injects its CA (needs cert-manager
# installed in the cluster); the replacements below fill in the names.
- ../certmanager
"""


def _default_kustomization(text: str, ctx: dict[str, Any], where: str) -> str:
    """Turn on ../webhook, ../certmanager, the manager webhook patch and cert-manager's CA injection."""
    anchor = "- ../manager\n"
    if "- ../webhook\n" not in text and anchor in text:
        text = text.replace(anchor, anchor + _WEBHOOK_RESOURCES, 1)
    text = edits.enable_list_entry(text, "../webhook", where=where)
    text = edits.enable_list_entry(text, "../certmanager", where=where)
    data = edits._load_round_trip(text)
    patches = data.get("patches")
    if patches is None:
        from ruamel.yaml.comments import CommentedSeq

        patches = data["patches"] = CommentedSeq()
    if not any(isinstance(p, dict) and p.get("path") == "manager_webhook_patch.yaml" for p in patches):
        patches.append({"path": "manager_webhook_patch.yaml", "target": {"kind": "Deployment"}})
    replacements = data.get("replacements")
    if replacements is None:
        from ruamel.yaml.comments import CommentedSeq

        replacements = data["replacements"] = CommentedSeq()
    wanted = _replacements(ctx)
    for item in wanted:
        if item not in replacements:
            replacements.append(copy.deepcopy(item))  # shared dicts would be dumped as YAML anchors
    import io

    buffer = io.StringIO()
    edits._yaml().dump(data, buffer)
    return buffer.getvalue()


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


def _replacements(ctx: dict[str, Any]) -> list[dict[str, Any]]:
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
    if ctx["defaulting"]:
        targets.append(_select("MutatingWebhookConfiguration"))
    if ctx["validation"]:
        targets.append(_select("ValidatingWebhookConfiguration"))
    if ctx["conversion"]:
        targets.append(_select("CustomResourceDefinition", name=f"{ctx['plural']}.{ctx['qualified_group']}"))
    for select in targets:
        out.append(_replacement({**cert_src, "fieldPath": ".metadata.namespace"}, select, inject, "/", 0))
        out.append(_replacement({**cert_src, "fieldPath": ".metadata.name"}, select, inject, "/", 1))
    return out


def _main_server(text: str, where: str) -> str:
    """The webhook server and its flags, shared by every webhook of the project."""
    if "--webhook-port" not in text:
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
        # beside the runtime import; ruff sorts the block when the plan is formatted
        m = re.search(r"^from pyscaffold_op\.runtime import (\([^)]*\)|.*)\n", text, re.MULTILINE)
        if m is None:
            raise ProjectError(
                f"cannot add the webhook server to {where}: it does not import pyscaffold_op.runtime"
            )
        new_import = "from pyscaffold_op.runtime.webhook import WebhookServer\n"
        text = text[: m.end()] + new_import + text[m.end() :]
        server = [
            "mgr.webhook_server = WebhookServer("
            "port=args.webhook_port, cert_dir=args.webhook_cert_path, generate_missing=True)"
        ]
        text = edits.insert_at_marker(text, "controllers", server, where=where)
    return text


def _main_py(text: str, ctx: dict[str, Any], where: str) -> str:
    setup = f"setup_{ctx['var']}_webhook_with_manager"
    if f"{setup}(mgr)" in text:
        return text
    import_line = f"from {ctx['webhook_module']} import {setup}"
    first_party = f"from {ctx['package']}."
    text = edits.insert_sorted(
        text,
        "imports",
        import_line,
        where=where,
        sort_key=edits.import_sort_key,
        belongs=lambda line: line.startswith(first_party),
    )
    return edits.insert_at_marker(text, "controllers", [f"{setup}(mgr)"], where=where)


def _keeps_scaffolded_foo(types_file: Path, kind: str) -> bool:
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


def build_context(options: WebhookOptions, project: Project, header: str, root: Path) -> dict[str, Any]:
    resource = project.find(options.group, options.version, options.kind)
    assert resource is not None
    qualified_group = resource.qualified_group()
    api_module = project.api_module(resource)
    var = _snake(options.kind)
    kind_lower = options.kind.lower()
    group_module = names.group_module_name(options.group)
    webhooks_pkg = f"{project.package}.webhooks" + (f".{group_module}" if project.multigroup else "")
    webhook_module = f"{webhooks_pkg}.{options.version}.{kind_lower}_webhook"
    defaulting_path = options.defaulting_path or mutate_path(qualified_group, options.version, options.kind)
    validation_path = options.validation_path or validate_path(qualified_group, options.version, options.kind)
    example = _keeps_scaffolded_foo(project.api_dir(root, resource) / f"{kind_lower}_types.py", options.kind)
    runtime_imports = ["webhook_managed_by"]
    if options.validation and example:
        runtime_imports = ["FieldError", "ValidationError", *runtime_imports]
    plural = resource.plural or names.pluralize(options.kind)
    test_name = (
        f"test_{group_module}_{kind_lower}_webhook.py"
        if project.multigroup
        else f"test_{kind_lower}_webhook.py"
    )
    return {
        "header": header,
        "package": project.package,
        "project_name": project.project_name,
        "kind": options.kind,
        "kind_lower": kind_lower,
        "var": var,
        "version": options.version,
        "qualified_group": qualified_group,
        "api_version": f"{qualified_group}/{options.version}",
        "plural": plural,
        "namespaced": resource.api.namespaced if resource.api else True,
        "api_module": api_module,
        "webhook_module": webhook_module,
        "webhook_path": "src/" + webhook_module.replace(".", "/") + ".py",
        "test_path": f"tests/{test_name}",
        "logger": f"{project.package}.webhooks",
        "runtime_imports": ", ".join(runtime_imports),
        "defaulting": options.defaulting,
        "validation": options.validation,
        "conversion": options.conversion,
        "defaulting_path": defaulting_path,
        "validation_path": validation_path,
        "custom_defaulting_path": options.defaulting_path is not None,
        "custom_validation_path": options.validation_path is not None,
        "hub_module": api_module,
        "example": example,
        "sample_path": f"config/samples/{options.group}_{options.version}_{kind_lower}.yaml",
    }


def plan_webhook(options: WebhookOptions, root: Path, project: Project) -> FilePlan:
    validate_inputs(options)
    resource = project.find(options.group, options.version, options.kind)
    if resource is None or resource.api is None:
        raise ProjectError(
            f"no API {options.group}/{options.version}, Kind={options.kind} in {PROJECT_FILE}: "
            "run `pyop create api` for it first"
        )
    recorded = resource.webhooks
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
    ctx = build_context(options, project, project_header(root), root)
    planner = _Planner(FilePlan(root), options.force, [])
    pristine = _pristine_files(planner.plan)
    log = _Log(planner)
    g, v, k = options.group, options.version, options.kind
    anyone = Need()
    admission = Need(types=list(ADMISSION))
    mine = Need(group=g, version=v, kind=k)
    docstrings = {"webhooks": f"The webhooks of {project.project_name}, one package per version."}
    inits_before = set(planner.created)
    _package_inits(planner, ctx, ctx["webhook_module"], docstrings)
    for relpath in planner.created:
        if relpath not in inits_before:
            log.files[relpath] = _init_need(relpath, ctx, project.multigroup, g)
    merged = _merged_options(options, recorded)
    spokes = [
        {"module": project.api_module(r), "alias": f"{options.kind}{r.version[:1].upper()}{r.version[1:]}"}
        for r in project.resources
        if (r.group, r.kind) == (options.group, options.kind) and r.version in options.spokes and r.api
    ]
    existing = planner.plan.read_current(ctx["webhook_path"])
    if options.defaulting or options.validation or existing is None:
        edited = ctx["webhook_path"] not in pristine
        if existing is not None and recorded is not None and edited and not options.force:
            raise ProjectError(
                f"{ctx['webhook_path']} was edited since pyop wrote it; pass --force to overwrite it"
            )
        full = {**ctx, **merged, "spokes": spokes}
        log.new(ctx["webhook_path"], render("webhook/webhook.py.jinja", full), mine)
        if merged["defaulting"] or merged["validation"]:
            log.new(
                ctx["test_path"],
                render("webhook/webhook_test.py.jinja", full),
                Need(group=g, version=v, kind=k, types=list(ADMISSION)),
            )
    else:  # a conversion added to an existing webhook file: register the spokes there
        planner.edit(ctx["webhook_path"], lambda t: _add_spokes(t, spokes, ctx))
        log.files[ctx["webhook_path"]] = mine
    main_py = f"src/{ctx['package']}/__main__.py"
    log.edit(main_py, lambda t: _main_server(t, "__main__.py"), anyone)
    log.edit(main_py, lambda t: _main_py(t, ctx, "__main__.py"), mine)
    if merged["defaulting"] or merged["validation"]:
        log.new("config/webhook/service.yaml", render("webhook/service.yaml.jinja", ctx), admission)
        log.ensure(
            "config/webhook/kustomization.yaml", render("webhook/webhook_kustomization.yaml", ctx), admission
        )
        log.ensure(
            "config/webhook/kustomizeconfig.yaml",
            render("webhook/webhook_kustomizeconfig.yaml", ctx),
            admission,
        )
    if options.conversion:
        _plan_conversion(log, options, project, ctx)
    for relpath, template in (
        ("config/certmanager/issuer.yaml", "webhook/issuer.yaml.jinja"),
        ("config/certmanager/certificate-webhook.yaml", "webhook/certificate-webhook.yaml.jinja"),
        ("config/certmanager/kustomization.yaml", "webhook/certmanager_kustomization.yaml"),
        ("config/certmanager/kustomizeconfig.yaml", "webhook/certmanager_kustomizeconfig.yaml"),
        ("config/default/manager_webhook_patch.yaml", "webhook/manager_webhook_patch.yaml.jinja"),
        ("config/network-policy/allow-webhook-traffic.yaml", "webhook/allow-webhook-traffic.yaml.jinja"),
    ):
        log.ensure(relpath, render(template, ctx), anyone)
    log.edit(
        "config/network-policy/kustomization.yaml",
        lambda t: edits.add_list_entry(
            t, "allow-webhook-traffic.yaml", where="config/network-policy/kustomization.yaml"
        ),
        anyone,
    )
    # one step per need, so each replacement is recorded with the webhooks that use it
    default = "config/default/kustomization.yaml"
    merged_ctx = {**ctx, **_merged_options(options, recorded)}
    none = {"defaulting": False, "validation": False, "conversion": False}
    steps: list[tuple[dict[str, bool], Need]] = [(none, anyone)]
    if merged_ctx["defaulting"]:
        steps.append(({**none, "defaulting": True}, Need(types=["defaulting"])))
    if merged_ctx["validation"]:
        steps.append(({**none, "validation": True}, Need(types=["validation"])))
    if merged_ctx["conversion"]:
        steps.append(({**none, "conversion": True}, Need(group=g, kind=k, types=["conversion"])))
    for flags, need in steps:
        log.edit(
            default, functools.partial(_default_kustomization, ctx={**ctx, **flags}, where=default), need
        )
    # a file pyop wrote and nobody edited since is re-rendered freely (another webhook type added later)
    clashes = [relpath for relpath in planner.clashes if relpath not in pristine]
    if clashes:
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise ProjectError(f"{clashes[0]} already exists{more}; pass --force to overwrite")
    planner.plan.write(PROJECT_FILE, _updated_project(project, options).dump())
    format_python(planner.plan)
    _write_record(log, options)
    return planner.plan


def _init_need(relpath: str, ctx: dict[str, Any], multigroup: bool, group: str) -> Need:
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


def _write_record(log: _Log, options: WebhookOptions) -> None:
    plan = log.planner.plan
    record = load_record(plan.read_current(RECORD_FILE))
    hooks = record.webhooks.model_copy(deep=True)
    kind = WebhookKind(group=options.group, version=options.version, kind=options.kind)
    if kind not in hooks.kinds:
        hooks.kinds.append(kind)
    for relpath, need in log.files.items():
        text = plan.read_current(relpath)
        assert text is not None
        old = hooks.files.get(relpath)
        hooks.files[relpath] = OwnedFile(digest=digest(text), need=old.need if old else need)
    hooks.changes.extend(log.changes)
    plan.write(RECORD_FILE, record.model_copy(update={"webhooks": hooks}).dump())


def _add_spokes(text: str, spokes: list[dict[str, str]], ctx: dict[str, Any]) -> str:
    where = ctx["webhook_path"]
    anchor = "    builder.complete()\n"
    if anchor not in text:
        raise ProjectError(
            f"cannot register the conversion spokes in {where}: `builder.complete()` is missing"
        )
    for spoke in spokes:
        line = f"from {spoke['module']} import {ctx['kind']} as {spoke['alias']}"
        text = _add_import(text, line, where, ctx["package"])
    aliases = ", ".join(s["alias"] for s in spokes)
    return text.replace(anchor, f"    builder = builder.with_spokes({aliases})\n" + anchor, 1)


def _merged_options(options: WebhookOptions, recorded: ResourceWebhooks | None) -> dict[str, Any]:
    """What the webhook file holds after this run: earlier webhooks of the kind are kept."""

    def was(name: str) -> bool:
        return bool(recorded is not None and getattr(recorded, name))

    return {
        "defaulting": options.defaulting or was("defaulting"),
        "validation": options.validation or was("validation"),
        "conversion": options.conversion or was("conversion"),
    }


def _plan_conversion(log: _Log, options: WebhookOptions, project: Project, ctx: dict[str, Any]) -> None:
    hub_types = f"{ctx['hub_module'].replace('.', '/')}/{ctx['kind_lower']}_types.py"
    hub_path = f"src/{hub_types}"
    kind = options.kind
    mine = Need(group=options.group, version=options.version, kind=kind, types=["conversion"])
    of_kind = Need(group=options.group, kind=kind, types=["conversion"])

    def hub(text: str) -> str:
        text = _add_base(text, kind, "Hub", hub_path, first=False)
        text = _add_import(text, "from pyscaffold_op.runtime.webhook import Hub", hub_path, ctx["package"])
        return _mark_storage_version(text, kind, hub_path)

    log.edit(hub_path, hub, mine)
    for spoke in options.spokes:
        resource = project.find(options.group, spoke, kind)
        assert resource is not None
        spoke_module = project.api_module(resource)
        spoke_dir = "src/" + spoke_module.replace(".", "/")
        conversion_module = f"{spoke_module}.{ctx['kind_lower']}_conversion"
        log.new(
            f"{spoke_dir}/{ctx['kind_lower']}_conversion.py",
            render("webhook/conversion.py.jinja", {**ctx, "spoke": spoke}),
            mine,
        )
        types_path = f"{spoke_dir}/{ctx['kind_lower']}_types.py"
        import_line = f"from {conversion_module} import {kind}Conversion"

        def spoke_edit(text: str, path: str = types_path, line: str = import_line) -> str:
            text = _add_base(text, kind, f"{kind}Conversion", path, first=True)
            return _add_import(text, line, path, ctx["package"])

        log.edit(types_path, spoke_edit, mine)
    patch = f"patches/webhook_in_{ctx['plural']}.yaml"
    log.new(f"config/crd/{patch}", render("webhook/webhook_in_crd.yaml.jinja", ctx), of_kind)
    conversions = Need(types=["conversion"])
    log.ensure(
        "config/crd/kustomizeconfig.yaml", render("webhook/crd_kustomizeconfig.yaml", ctx), conversions
    )
    crd = "config/crd/kustomization.yaml"
    log.edit(
        crd,
        lambda t: edits.add_list_entry(t, "kustomizeconfig.yaml", where=crd, key="configurations"),
        conversions,
    )

    def crd_kustomization(text: str) -> str:
        data = edits._load_round_trip(text)
        patches = data.get("patches")
        if patches is None:
            from ruamel.yaml.comments import CommentedSeq

            patches = data["patches"] = CommentedSeq()
        if not any(isinstance(p, dict) and p.get("path") == patch for p in patches):
            patches.append({"path": patch})
        import io

        buffer = io.StringIO()
        edits._yaml().dump(data, buffer)
        return buffer.getvalue()

    log.edit(crd, crd_kustomization, of_kind)


def _updated_project(project: Project, options: WebhookOptions) -> Project:
    updated = project.model_copy(deep=True)
    resource = updated.find(options.group, options.version, options.kind)
    assert resource is not None
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

    validate_inputs(options)
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run `pyop init` first")
    project = load_project(root)
    return root, apply(plan_webhook(options, root, project))
