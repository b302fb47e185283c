"""The names of one resource, derived once: kubebuilder's `resource.Resource` for pyop's templates.

`create api`, `create webhook`, `delete webhook` (which renders the webhook again for the types left)
and `create api --image` build a `ResourceNames` from their validated inputs and the PROJECT, and hand it
to the templates (`render.render`), which read its fields flat (`{{ kind }}`, `{{ api_module }}`).
Nothing else derives a module path, a file name or a webhook path of a resource.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pyscaffold_op import names
from pyscaffold_op.apimachinery.webhookpaths import mutate_path, validate_path
from pyscaffold_op.project import Project, Resource
from pyscaffold_op.scaffold.deployimage import DeployImage
from pyscaffold_op.scaffold.otherapi import OtherKind


@dataclass(frozen=True)
class ResourceNames:
    header: str
    """The project's license header, first in every Python file."""
    package: str
    project_name: str
    domain: str
    multigroup: bool
    rbac_scope: str
    """`,namespace=<project>-system` in a namespaced project's RBAC markers (a Role, like kubebuilder)."""
    role_kind: str
    """The admin/editor/viewer helper roles' kind: `Role` in a namespaced project, like kubebuilder."""

    group: str
    group_module: str
    """The group's Python package in a multigroup project (`Project.group_module`: `foo.policy` ->
    `foo_policy`)."""
    version: str
    kind: str
    kind_lower: str
    a_kind: str
    """`a CronJob`, `an Ingress`."""
    var: str
    """The kind's snake_case variable in the scaffolded code."""
    plural: str
    namespaced: bool
    qualified_group: str
    """`<group>.<domain>`; `core` for the core group (as RBAC markers name it)."""
    api_version: str

    api_module: str
    """The module of the kind's types package (a built-in or external kind's model module)."""
    api_dir: str
    types_path: str
    sample_name: str
    sample_path: str
    crd_file: str
    """The CRD below config/crd/."""
    role_prefix: str
    role_file_prefix: str

    controllers_module: str
    controller_module: str
    controller_path: str
    controller_test_path: str
    controller_name: str
    reconciler: str
    reconciler_import: str
    """The reconciler's name in `__main__.py` (prefixed by the group in a multigroup project)."""
    recorder_name: str
    get_args: str
    """The arguments of the reconciler's `client.get` of the kind."""

    webhook_module: str
    webhooks_package: str
    """The package holding the webhooks' version packages (`<pkg>.webhooks`, or `.<group>` below it)."""
    webhook_file: str
    webhook_test_path: str
    logger: str
    mutate_path: str
    """The defaulting webhook's default URL path (`apimachinery.webhookpaths`)."""
    validate_path: str

    deploy_image: DeployImage | None = None
    """`create api --image`: the image the controller deploys."""

    def template_vars(self) -> dict[str, Any]:
        """The fields, flat, as the templates read them (the image's fields flat too)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        image = self.deploy_image
        out.update(
            deploy_image=image is not None,
            image=image.image if image else None,
            image_env=image.env_var(self.kind) if image else None,
            image_command=list(image.command) if image else [],
            container_port=image.port if image else None,
            run_as_user=image.run_as_user if image else None,
        )
        return out


def helper_role_kind(*, namespaced: bool) -> str:
    """The kind of a kind's admin/editor/viewer roles: a Role in a namespaced project (`init --namespaced`,
    `edit --namespaced`), as kubebuilder scaffolds them, else a ClusterRole."""
    return "Role" if namespaced else "ClusterRole"


def resource_names(
    project: Project,
    *,
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool,
    header: str,
    controller_name: str | None = None,
    deploy_image: DeployImage | None = None,
    other: OtherKind | None = None,
    recorded_domain: bool = False,
    versioned_webhook_test: bool = False,
) -> ResourceNames:
    """The names of a kind of this project (recorded in PROJECT or about to be), or with `other` of a
    built-in or external kind a controller watches. The group is qualified by the PROJECT's domain, or
    with `recorded_domain` by the one PROJECT records for the kind (`create webhook`). With
    `versioned_webhook_test` the webhook test's file names the version
    (`tests/test_<kind>_<version>_webhook.py`: another version of the kind has one already)."""
    if other is not None:
        group, plural, namespaced = other.group, other.plural, other.namespaced
    resource = Resource(group=group, version=version, kind=kind, domain=project.domain)
    recorded = project.find(group, version, kind)
    if recorded_domain and recorded is not None:
        resource = recorded
    qualified_group = resource.qualified_group()
    api_module = project.api_module(recorded if recorded is not None else resource)
    api_version = f"{qualified_group}/{version}"
    webhook_paths = (
        mutate_path(qualified_group, version, kind),
        validate_path(qualified_group, version, kind),
    )
    if other is not None:
        api_module = other.module
        qualified_group = other.qualified_group or "core"  # RBAC markers name the core group `core`
        api_version = f"{other.qualified_group}/{version}".lstrip("/")
        webhook_paths = (  # the core group is "": `/mutate--v1-pod`, as controller-runtime serves it
            mutate_path(other.qualified_group, version, kind),
            validate_path(other.qualified_group, version, kind),
        )
    multigroup = project.multigroup
    group_module = project.group_module(group)
    kind_lower = kind.lower()
    api_dir = "src/" + api_module.replace(".", "/")
    sample_name = f"{group}_{version}_{kind_lower}.yaml"

    controllers_module = f"{project.package}.controllers" + (f".{group_module}" if multigroup else "")
    stem = controller_name.replace("-", "_") if controller_name else None
    controller_module = f"{controllers_module}.{stem or kind_lower}_controller"
    reconciler = f"{names.pascal_case(stem)}Reconciler" if stem else f"{kind}Reconciler"
    test_stem = f"{group_module}_{stem or kind_lower}" if multigroup else (stem or kind_lower)
    # kubebuilder names a multigroup kind's controller and helper roles after the whole group
    # (`foo.policy-healthcheckpolicy`, `foo.policy-healthcheckpolicy-admin-role`)
    per_group = f"{group}-{kind_lower}" if multigroup else kind_lower

    webhooks_package = f"{project.package}.webhooks" + (f".{group_module}" if multigroup else "")
    webhook_module = f"{webhooks_package}.{version}.{kind_lower}_webhook"
    webhook_test = f"{group_module}_{kind_lower}" if multigroup else kind_lower
    if versioned_webhook_test:
        webhook_test += f"_{version}"
    return ResourceNames(
        header=header,
        package=project.package,
        project_name=project.project_name,
        domain=project.domain,
        multigroup=multigroup,
        rbac_scope=f",namespace={project.project_name}-system" if project.namespaced else "",
        role_kind=helper_role_kind(namespaced=project.namespaced),
        group=group,
        group_module=group_module,
        version=version,
        kind=kind,
        kind_lower=kind_lower,
        a_kind=f"an {kind}" if kind[0] in "AEIOU" else f"a {kind}",
        var=names.snake_case(kind),
        plural=plural,
        namespaced=namespaced,
        qualified_group=qualified_group,
        api_version=api_version,
        api_module=api_module,
        api_dir=api_dir,
        types_path=f"{api_dir}/{kind_lower}_types.py",
        sample_name=sample_name,
        sample_path=f"config/samples/{sample_name}",
        crd_file=f"bases/{qualified_group}_{plural}.yaml",
        role_prefix=per_group,
        role_file_prefix=f"{group_module}_{kind_lower}" if multigroup else kind_lower,
        controllers_module=controllers_module,
        controller_module=controller_module,
        controller_path="src/" + controller_module.replace(".", "/") + ".py",
        controller_test_path=f"tests/test_{test_stem}_controller.py",
        controller_name=controller_name or per_group,
        reconciler=reconciler,
        reconciler_import=f"{names.pascal_case(group_module)}{reconciler}" if multigroup else reconciler,
        recorder_name=f"{controller_name or per_group}-controller",
        get_args=f"{kind}, request.name" + (", namespace=request.namespace" if namespaced else ""),
        webhook_module=webhook_module,
        webhooks_package=webhooks_package,
        webhook_file="src/" + webhook_module.replace(".", "/") + ".py",
        webhook_test_path=f"tests/test_{webhook_test}_webhook.py",
        logger=f"{project.package}.webhooks",
        mutate_path=webhook_paths[0],
        validate_path=webhook_paths[1],
        deploy_image=deploy_image,
    )
