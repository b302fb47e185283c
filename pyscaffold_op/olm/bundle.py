"""`pyop generate bundle`: an OLM bundle from `kubectl kustomize config/manifests` (operator-sdk's
`generate bundle`).

The CSV base becomes the bundle's CSV: its name `<package>.v<version>`, `spec.version`, the install
strategy (the manager Deployment; the rules of Roles and ClusterRoles bound to its service account as
`permissions` and `clusterPermissions`), webhook definitions (from the webhook configurations and CRD
conversion webhooks; their Service and cert-manager objects dropped: OLM makes the certificates),
`relatedImages`, `minKubeVersion` (unless the base sets it: the oldest Kubernetes serving every API
feature the CRDs use) and `alm-examples` (the samples). CRDs and the other objects (unbound roles,
Services, ...) are written beside it; the service account, bindings, Namespace and the scorecard
Configuration are not manifests of a bundle (the last goes to `tests/scorecard/config.yaml`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op import __version__, yamlio
from pyscaffold_op.errors import GenerateError

BUILDER = f"pyop-v{__version__}"
LAYOUT = "python.pyop.io/v1"
DEFAULT_CHANNEL = "alpha"
SCORECARD_DIR = "tests/scorecard/"
DROPPED_KINDS = {"Namespace", "Issuer", "Certificate", "ClusterIssuer"}
RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class BundleOptions:
    version: str = "0.0.1"
    channels: str | None = None
    default_channel: str | None = None
    package: str | None = None
    output_dir: str = "bundle"
    use_image_digests: bool = False
    overwrite: bool = True


@dataclass
class Bundle:
    csv: dict[str, Any]
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)
    scorecard: dict[str, Any] | None = None


def _gvk(obj: dict[str, Any]) -> tuple[str, str, str]:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return group, version, str(obj.get("kind", ""))


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def manifest_file_name(obj: dict[str, Any]) -> str:
    """operator-sdk's names: `<group>_<plural>.yaml` for a CRD, `<name>_<group>_<version>_<kind>.yaml`
    (`<name>_<version>_<kind>.yaml` in the core group) otherwise."""
    group, version, kind = _gvk(obj)
    if kind == "CustomResourceDefinition":
        spec = obj.get("spec") or {}
        return f"{spec.get('group')}_{(spec.get('names') or {}).get('plural')}.yaml"
    parts = [_name(obj), *([group] if group else []), version, kind.lower()]
    return "_".join(parts) + ".yaml"


def _semver_ok(text: str) -> bool:
    from pyscaffold_op.olm.semver import parse

    return parse(text) is not None


def _service_account_of(deployment: dict[str, Any]) -> str:
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    return str(pod.get("serviceAccountName") or "default")


def _min_kube_version(crds: list[dict[str, Any]]) -> str:
    """The oldest release serving what the CRDs use: apiextensions.k8s.io/v1 (1.16), CEL validation
    rules (1.25), selectable fields (1.31)."""
    text = json.dumps(crds)
    if '"selectableFields"' in text:
        return "1.31.0"
    if '"x-kubernetes-validations"' in text:
        return "1.25.0"
    return "1.16.0"


def _images(deployments: list[dict[str, Any]]) -> list[dict[str, str]]:
    """relatedImages: every container's image and every `RELATED_IMAGE_*` / `*_IMAGE` env value."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for dep in deployments:
        pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
            candidates = [(str(container.get("name")), container.get("image"))]
            for env in container.get("env") or []:
                if str(env.get("name", "")).endswith("_IMAGE") or str(env.get("name", "")).startswith(
                    "RELATED_IMAGE_"
                ):
                    candidates.append((str(env["name"]).lower().replace("_", "-"), env.get("value")))
            for name, image in candidates:
                if isinstance(image, str) and image and image not in seen:
                    seen.add(image)
                    out.append({"image": image, "name": name})
    return out


def _check_digests(images: list[dict[str, str]]) -> None:
    unpinned = [i["image"] for i in images if "@sha256:" not in i["image"]]
    if unpinned:
        raise GenerateError(
            "--use-image-digests: these images are not pinned by digest: "
            + ", ".join(unpinned)
            + " (pyop resolves no registry: set IMG=<repo>@sha256:<digest>"
            + " and pin the others in the manifests)"
        )


def _webhook_definitions(
    objects: list[dict[str, Any]],
    crds: list[dict[str, Any]],
    deployment: str,
    services: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def ports(service_name: str, port: Any) -> tuple[int, int]:
        svc = services.get(service_name) or {}
        for p in (svc.get("spec") or {}).get("ports") or []:
            if port in (None, p.get("port")):
                target = p.get("targetPort", p.get("port"))
                return int(p.get("port", 443)), int(target) if isinstance(target, int) else 9443
        return 443, 9443

    for obj in objects:
        kind = obj.get("kind")
        if kind not in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            continue
        for hook in obj.get("webhooks") or []:
            service = (hook.get("clientConfig") or {}).get("service") or {}
            container_port, target_port = ports(str(service.get("name", "")), service.get("port"))
            entry: dict[str, Any] = {
                "type": "MutatingAdmissionWebhook"
                if kind.startswith("Mutating")
                else "ValidatingAdmissionWebhook",
                "generateName": hook.get("name"),
                "deploymentName": deployment,
                "containerPort": container_port,
                "targetPort": target_port,
                "admissionReviewVersions": hook.get("admissionReviewVersions") or ["v1"],
                "sideEffects": hook.get("sideEffects", "None"),
            }
            for key in (
                "failurePolicy",
                "matchPolicy",
                "objectSelector",
                "rules",
                "timeoutSeconds",
                "reinvocationPolicy",
            ):
                if hook.get(key) is not None:
                    entry[key] = hook[key]
            if service.get("path"):
                entry["webhookPath"] = service["path"]
            out.append(entry)
    for crd in crds:
        conversion = (crd.get("spec") or {}).get("conversion") or {}
        if conversion.get("strategy") != "Webhook":
            continue
        client = (conversion.get("webhook") or {}).get("clientConfig") or {}
        service = client.get("service") or {}
        container_port, target_port = ports(str(service.get("name", "")), service.get("port"))
        out.append(
            {
                "type": "ConversionWebhook",
                "generateName": f"c{_name(crd)}",
                "deploymentName": deployment,
                "containerPort": container_port,
                "targetPort": target_port,
                "admissionReviewVersions": (conversion.get("webhook") or {}).get("conversionReviewVersions")
                or ["v1"],
                "sideEffects": "None",
                "conversionCRDs": [_name(crd)],
                "webhookPath": service.get("path", "/convert"),
            }
        )
    return out


def build_bundle(objects: list[dict[str, Any]], package: str, options: BundleOptions) -> Bundle:
    """The bundle of the kustomize output `objects` (pure: no file is read or written)."""
    import copy

    csvs = [o for o in objects if o.get("kind") == "ClusterServiceVersion"]
    if len(csvs) != 1:
        raise GenerateError(
            f"the manifests hold {len(csvs)} ClusterServiceVersions, not one: "
            "run `pyop generate kustomize manifests` and list its base in config/manifests/kustomization.yaml"
        )
    if not _semver_ok(options.version):
        raise GenerateError(f"--version {options.version!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    csv = copy.deepcopy(csvs[0])
    crds = [o for o in objects if o.get("kind") == "CustomResourceDefinition"]
    deployments = [o for o in objects if o.get("kind") == "Deployment"]
    if not deployments:
        raise GenerateError("the manifests hold no Deployment: config/manifests must include ../default")
    owned_groups = {(c.get("spec") or {}).get("group") for c in crds}
    owned_kinds = {
        ((c.get("spec") or {}).get("group"), ((c.get("spec") or {}).get("names") or {}).get("kind"))
        for c in crds
    }
    examples = [o for o in objects if (_gvk(o)[0], _gvk(o)[2]) in owned_kinds]
    scorecards = [o for o in objects if _gvk(o)[0] == "scorecard.operatorframework.io"]
    accounts = {_service_account_of(d) for d in deployments}
    services = {_name(o): o for o in objects if o.get("kind") == "Service"}
    webhook_services: set[str] = set()
    for o in objects:
        for hook in o.get("webhooks") or [] if o.get("kind", "").endswith("WebhookConfiguration") else []:
            webhook_services.add(str(((hook.get("clientConfig") or {}).get("service") or {}).get("name", "")))
    for c in crds:
        conv = ((c.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        name = ((conv.get("clientConfig") or {}).get("service") or {}).get("name")
        if name:
            webhook_services.add(str(name))

    roles: dict[tuple[Any, str], dict[str, Any]] = {
        (o.get("kind"), _name(o)): o
        for o in objects
        if _gvk(o)[0] == RBAC and o.get("kind") in ("Role", "ClusterRole")
    }
    bound: set[tuple[str, str]] = set()
    permissions: dict[str, list[dict[str, Any]]] = {}
    cluster_permissions: dict[str, list[dict[str, Any]]] = {}
    bindings_used: set[int] = set()
    for index, o in enumerate(objects):
        if _gvk(o)[0] != RBAC or o.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        subjects = [
            s
            for s in o.get("subjects") or []
            if s.get("kind") == "ServiceAccount" and s.get("name") in accounts
        ]
        ref = o.get("roleRef") or {}
        role = roles.get((ref.get("kind"), str(ref.get("name"))))
        if not subjects or role is None:
            continue
        bindings_used.add(index)
        bound.add((str(ref.get("kind")), str(ref.get("name"))))
        target = cluster_permissions if o.get("kind") == "ClusterRoleBinding" else permissions
        for subject in subjects:
            target.setdefault(str(subject["name"]), []).extend(copy.deepcopy(role.get("rules") or []))

    manifests: dict[str, dict[str, Any]] = {}
    for index, o in enumerate(objects):
        group, _, kind = _gvk(o)
        if (
            o is csvs[0]
            or kind in ("Deployment",)
            or kind in DROPPED_KINDS
            or group in ("cert-manager.io", "scorecard.operatorframework.io")
            or (group, kind) in owned_kinds
            or index in bindings_used
            or (kind in ("Role", "ClusterRole") and group == RBAC and (kind, _name(o)) in bound)
            or (kind == "ServiceAccount" and _name(o) in accounts)
            or (kind == "Service" and _name(o) in webhook_services)
            or kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        ):
            continue
        if kind == "CustomResourceDefinition":
            o = copy.deepcopy(o)
            conversion = (o.get("spec") or {}).get("conversion")
            if conversion and conversion.get("strategy") == "Webhook":
                # OLM fills the conversion webhook's service and CA in from the CSV's webhookdefinitions
                (conversion.get("webhook") or {}).pop("clientConfig", None)
            for key in ("cert-manager.io/inject-ca-from",):
                ((o.get("metadata") or {}).get("annotations") or {}).pop(key, None)
        manifests[manifest_file_name(o)] = o

    metadata = csv.setdefault("metadata", {})
    metadata["name"] = f"{package}.v{options.version}"
    metadata.pop("namespace", None)
    csv_annotations: dict[str, Any] = metadata.setdefault("annotations", {}) or {}
    metadata["annotations"] = csv_annotations
    csv_annotations["alm-examples"] = json.dumps([_clean_example(e) for e in examples], indent=2)
    csv_annotations["operators.operatorframework.io/builder"] = BUILDER
    csv_annotations["operators.operatorframework.io/project_layout"] = LAYOUT
    spec = csv.setdefault("spec", {})
    spec["version"] = options.version
    if not spec.get("minKubeVersion"):
        spec["minKubeVersion"] = _min_kube_version(crds)
    dep_specs = []
    for dep in deployments:
        dep_specs.append(
            {
                "label": dict((dep.get("metadata") or {}).get("labels") or {}),
                "name": _name(dep),
                "spec": copy.deepcopy(dep.get("spec") or {}),
            }
        )
    install_spec: dict[str, Any] = {"deployments": dep_specs}
    if cluster_permissions:
        install_spec["clusterPermissions"] = [
            {"rules": rules, "serviceAccountName": sa} for sa, rules in sorted(cluster_permissions.items())
        ]
    if permissions:
        install_spec["permissions"] = [
            {"rules": rules, "serviceAccountName": sa} for sa, rules in sorted(permissions.items())
        ]
    spec["install"] = {"spec": install_spec, "strategy": "deployment"}
    hooks = _webhook_definitions(objects, crds, _name(deployments[0]), services)
    if hooks:
        spec["webhookdefinitions"] = hooks
    else:
        spec.pop("webhookdefinitions", None)
    images = _images(deployments)
    if options.use_image_digests:
        _check_digests(images)
    if images:
        spec["relatedImages"] = images
    _ = owned_groups
    return Bundle(csv=csv, manifests=manifests, scorecard=scorecards[0] if scorecards else None)


def _clean_example(obj: dict[str, Any]) -> dict[str, Any]:
    """A sample as an example: no namespace (OLM's console fills the one it is created in)."""
    import copy

    obj = copy.deepcopy(obj)
    (obj.get("metadata") or {}).pop("namespace", None)
    return obj


def _channels(options: BundleOptions) -> tuple[list[str], str | None]:
    channels = [c.strip() for c in (options.channels or DEFAULT_CHANNEL).split(",") if c.strip()]
    if not channels:
        raise GenerateError("--channels names no channel")
    default = options.default_channel
    if default is not None and default not in channels:
        raise GenerateError(f"--default-channel {default!r} is not one of --channels ({', '.join(channels)})")
    return channels, default


def bundle_annotations(package: str, options: BundleOptions, with_scorecard: bool) -> dict[str, str]:
    channels, default = _channels(options)
    out = {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": package,
        "operators.operatorframework.io.bundle.channels.v1": ",".join(channels),
    }
    if default:
        out["operators.operatorframework.io.bundle.channel.default.v1"] = default
    out["operators.operatorframework.io.metrics.builder"] = BUILDER
    out["operators.operatorframework.io.metrics.mediatype.v1"] = "metrics+v1"
    out["operators.operatorframework.io.metrics.project_layout"] = LAYOUT
    if with_scorecard:
        out["operators.operatorframework.io.test.mediatype.v1"] = "scorecard+v1"
        out["operators.operatorframework.io.test.config.v1"] = SCORECARD_DIR
    return out


def _annotations_yaml(values: dict[str, str]) -> str:
    lines = ["annotations:", "  # Core bundle annotations."]
    for key, value in values.items():
        if (
            key.startswith("operators.operatorframework.io.test.")
            and "# Annotations for testing." not in lines
        ):
            lines += ["", "  # Annotations for testing."]
        lines.append(f"  {key}: {yamlio.scalar(value)}")
    return "\n".join(lines) + "\n"


def _dockerfile(values: dict[str, str], output_dir: str, with_scorecard: bool) -> str:
    lines = ["FROM scratch", "", "# Core bundle labels."]
    for key, value in values.items():
        if key.startswith("operators.operatorframework.io.test.") and "# Labels for testing." not in lines:
            lines += ["", "# Labels for testing."]
        lines.append(f"LABEL {key}={value}")
    lines += [
        "",
        "# Copy files to locations specified by labels.",
        f"COPY {output_dir}/manifests /manifests/",
        f"COPY {output_dir}/metadata /metadata/",
    ]
    if with_scorecard:
        lines.append(f"COPY {output_dir}/tests/scorecard /tests/scorecard/")
    return "\n".join(lines) + "\n"


def _dockerignore(output_dir: str) -> str:
    return (
        "# bundle.Dockerfile's own ignore file (BuildKit, Podman): only the bundle goes into its context,\n"
        "# while .dockerignore keeps the manager image's context to the package.\n"
        f"*\n!{output_dir}/\n"
    )


def load_objects(text: str) -> list[dict[str, Any]]:
    import yaml

    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise GenerateError(f"the manifests are not valid YAML: {err}") from None
    return [d for d in docs if isinstance(d, dict) and d.get("kind")]


def generate_bundle(root: Path, manifests_text: str, options: BundleOptions) -> list[str]:
    """Write the bundle into `<root>/<output_dir>` (its manifests/ replaced whole) and
    `<root>/bundle.Dockerfile`; the written paths, relative to root."""
    from pyscaffold_op.project import load_project

    project = load_project(root)
    package = options.package or project.project_name
    bundle = build_bundle(load_objects(manifests_text), package, options)
    out_dir = root / options.output_dir
    files: dict[str, str] = {}
    csv_name = f"{options.output_dir}/manifests/{package}.clusterserviceversion.yaml"
    files[csv_name] = yamlio.dump(bundle.csv)
    for name, obj in sorted(bundle.manifests.items()):
        files[f"{options.output_dir}/manifests/{name}"] = yamlio.dump(obj)
    values = bundle_annotations(package, options, bundle.scorecard is not None)
    if bundle.scorecard is not None:
        files[f"{options.output_dir}/{SCORECARD_DIR}config.yaml"] = yamlio.dump(bundle.scorecard)
    metadata_file = f"{options.output_dir}/metadata/annotations.yaml"
    if options.overwrite or not (root / metadata_file).exists():
        files[metadata_file] = _annotations_yaml(values)
        files["bundle.Dockerfile"] = _dockerfile(values, options.output_dir, bundle.scorecard is not None)
        files["bundle.Dockerfile.dockerignore"] = _dockerignore(options.output_dir)
    manifests_dir = out_dir / "manifests"
    if manifests_dir.is_dir():
        shutil.rmtree(manifests_dir)
    for rel, text in files.items():
        yamlio.write_if_changed(root / rel, text)
    return list(files)
