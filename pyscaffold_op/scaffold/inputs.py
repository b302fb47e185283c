"""The scaffolder's inputs and their validation, in one place: each command's options, checked once on
their own (before the project folder is looked at, so a bad name is reported anywhere) and, for what
depends on the project, once against the PROJECT. Raises ValidationError.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from pyscaffold_op import names
from pyscaffold_op.apimachinery.validation import is_dns1123_subdomain
from pyscaffold_op.errors import ValidationError
from pyscaffold_op.project import Project
from pyscaffold_op.scaffold import deployimage, gopath

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
    ssa: bool = False
    """`--ssa`: the controller writes with server-side apply (kubebuilder's `create api --ssa`)."""
    daemon: bool = False
    """`--daemon`: the controller runs a daemon per object (kopf's `@kopf.daemon`; builder.daemon)."""
    timer: bool = False
    """`--timer`: the controller runs a timer per object (kopf's `@kopf.timer`; builder.timer)."""


def _refuse_reserved(
    kind: str, kinds: Collection[str], variables: Collection[str], flag: str, code: str
) -> None:
    """A kind whose class or variable name would shadow a name the scaffolded code uses."""
    if kind in kinds:
        raise ValidationError(
            f"invalid kind {kind!r}{flag}: it would shadow a name the scaffolded {code} imports "
            f"({', '.join(sorted(kinds))})"
        )
    if names.snake_case(kind) in variables:
        raise ValidationError(
            f"invalid kind {kind!r}{flag}: its variable {names.snake_case(kind)!r} would shadow a name the "
            f"scaffolded controller or its test uses ({', '.join(sorted(variables))})"
        )


def validate_api(options: ApiOptions) -> str:
    """Check `create api`'s flags on their own; returns the plural. Raises ValidationError."""
    names.validate_group(options.group)
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
    if options.ssa:
        _validate_ssa(options)
    if options.daemon or options.timer:
        _validate_daemons(options)
    if options.controller_name is not None:
        names.validate_dns1123_label(options.controller_name, "controller name")
    validate_external(
        options.group, options.external_api_path, options.external_api_domain, options.external_api_module
    )
    return plural


def python_module(name: str) -> bool:
    """A dotted Python module name whose parts an import statement accepts (no keyword)."""
    parts = name.split(".")
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in parts)


def validate_external(group: str, path: str | None, domain: str | None, module: str | None) -> None:
    """kubebuilder's external-kind flags, each checked like every other flag (they end up in PROJECT
    and in generated imports): the path a Go import path as kubebuilder validates it, the domain a
    DNS-1123 subdomain, the module a dotted Python module or a `go get` target
    (`github.com/cert-manager/cert-manager@v1.21.1`)."""
    if (domain or module) and not path:
        raise ValidationError("--external-api-domain and --external-api-module need --external-api-path")
    if path and not domain:
        raise ValidationError(
            "--external-api-domain is required with --external-api-path (the API group is <group>.<domain>)"
        )
    if path is not None:
        problem = gopath.external_api_path_problem(path)
        if problem is not None:
            raise ValidationError(f"invalid --external-api-path {path!r}: {problem}")
    if domain is not None:
        names.validate_dns1123_subdomain(domain, "--external-api-domain")
        full = f"{group}.{domain}" if group else domain
        if is_dns1123_subdomain(full):
            raise ValidationError(
                f"invalid --external-api-domain {domain!r}: the API group {full!r} must be a DNS-1123 "
                "subdomain of at most 253 characters"
            )
    if module is not None:
        # a dotted name is a Python module (pyop imports it); a Go module has a '/' or an '@version'
        python = "/" not in module and "@" not in module
        problem = (
            (None if python_module(module) else "a part is not an identifier or is a Python keyword")
            if python
            else gopath.go_module_target_problem(module)
        )
        if problem is not None:
            raise ValidationError(
                f"invalid --external-api-module {module!r}: neither a dotted Python module nor a Go module "
                f"({problem})"
            )


# What the --ssa controller and its test import or bind besides the names above.
SSA_RESERVED_KINDS = frozenset({"Conflict"})
SSA_RESERVED_VARIABLES = frozenset(
    {"again", "applied", "apply_configuration", "available", "find_condition", "mine", "name", "owners",
     "previous", "pytest", "taken", "theirs"}
)  # fmt: skip


def _validate_ssa(options: ApiOptions) -> None:
    if not options.resource:
        # kubebuilder's words: the types carry the apply configuration
        raise ValidationError("'--ssa' can only be used when creating an API resource ('--resource=true')")
    if options.deploy_image is not None:
        raise ValidationError("--ssa and --image: the deploy-image controller writes with create/update")
    _refuse_reserved(options.kind, SSA_RESERVED_KINDS, SSA_RESERVED_VARIABLES, " with --ssa", "code")


# What the --daemon/--timer controller and its test import or bind besides the names above.
DAEMON_RESERVED_KINDS = frozenset({"DaemonContext", "FakeClock"})
DAEMON_RESERVED_VARIABLES = frozenset(
    {"clock", "ctx", "started", "stopped", "tick", "ticked", "ticks", "watch", "watching"}
)


def _validate_daemons(options: ApiOptions) -> None:
    flag = "--daemon" if options.daemon else "--timer"
    if not options.controller:
        raise ValidationError(f"{flag} adds to the controller: it needs --controller")
    if options.deploy_image is not None:
        raise ValidationError(f"{flag} and --image: add the daemon to the deploy-image controller by hand")
    _refuse_reserved(options.kind, DAEMON_RESERVED_KINDS, DAEMON_RESERVED_VARIABLES, f" with {flag}", "code")


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
    plural: str | None = None
    """`--plural` (kubebuilder's flag): the kind's resource plural, checked against PROJECT's."""
    external_api_path: str | None = None
    """The kind belongs to another project's API (kubebuilder's flags, as `create api` takes them)."""
    external_api_domain: str | None = None
    external_api_module: str | None = None


def validate_webhook(options: WebhookOptions) -> None:
    """Check `create webhook`'s flags on their own. Raises ValidationError."""
    names.validate_group(options.group)
    names.validate_version(options.version)
    names.validate_kind(options.kind)
    if options.plural is not None:
        names.validate_plural(options.plural)
    if not (options.defaulting or options.validation or options.conversion):
        raise ValidationError(
            "nothing to scaffold: pass --defaulting, --programmatic-validation and/or --conversion"
        )
    if options.spokes and not options.conversion:
        raise ValidationError("--spoke is only for --conversion")
    validate_external(
        options.group, options.external_api_path, options.external_api_domain, options.external_api_module
    )
    if options.external_api_path and options.conversion:
        raise ValidationError(
            "--conversion is not for an external kind: its own project converts its versions"
        )
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


def validate_group_package(group: str, project: Project) -> None:
    """A new kind's group in a multigroup project: it names a Python package ('-' and '.' made '_')."""
    if project.multigroup:
        module = project.group_module(group)
        if not module.isidentifier() or keyword.iskeyword(module):
            raise ValidationError(
                f"invalid group {group!r}: in a multigroup project it names the Python packages "
                f"api/{module}/ and controllers/{module}/, so {module!r} must be a valid identifier "
                "(not starting with a digit) and not a Python keyword"
            )


@dataclass(frozen=True)
class DeleteOptions:
    """`pyop delete api`."""

    group: str
    version: str
    kind: str
    force: bool = False


@dataclass(frozen=True)
class DeleteWebhookOptions(DeleteOptions):
    """`pyop delete webhook`: the webhook types to delete (all of the kind's when none is given)."""

    defaulting: bool = False
    validation: bool = False
    conversion: bool = False


def validate_delete(options: DeleteOptions, project: Project) -> None:
    """The API a delete command names: a group, version and kind as `create` accepts them."""
    names.validate_group(options.group)
    names.validate_qualified_group(options.group, project.domain)
    names.validate_version(options.version)
    names.validate_kind(options.kind)
