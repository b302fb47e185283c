"""`pyop bundle validate`: operator-sdk's bundle validators (operator-framework/api's `pkg/validation`
and operator-registry's bundle format checks), each rule a function adding errors or warnings.

Suites: the default (bundle format and annotations, the CSV, the CRDs, the bundle's CRDs against the
CSV's owned ones, service accounts, size) always runs; `--select-optional suite=operatorframework`
adds `operatorhub` (OperatorHub.io's metadata, standard capabilities and categories),
`good-practices` and `alpha-deprecated-apis`; `name=<one of them>` adds one.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.olm.semver import parse as parse_semver

OPTIONAL = ("operatorhub", "good-practices", "alpha-deprecated-apis")
SUITES = {"operatorframework": OPTIONAL}
MAX_BUNDLE_SIZE = 1 << 20
SUPPORTED_KINDS = {
    "ClusterServiceVersion", "CustomResourceDefinition", "Secret", "ClusterRole", "ClusterRoleBinding",
    "ConfigMap", "ServiceAccount", "Service", "Role", "RoleBinding", "PrometheusRule", "ServiceMonitor",
    "PodDisruptionBudget", "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample",
    "ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "NetworkPolicy",
}  # fmt: skip
CAPABILITIES = ("Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot")
CATEGORIES = (
    "AI/Machine Learning", "Application Runtime", "Big Data", "Cloud Provider", "Developer Tools",
    "Database", "Integration & Delivery", "Logging & Tracing", "Monitoring", "Modernization & Migration",
    "Networking", "OpenShift Optional", "Security", "Storage", "Streaming & Messaging", "Observability",
)  # fmt: skip
ICON_TYPES = ("image/gif", "image/jpeg", "image/png", "image/svg+xml")
REQUIRED_ANNOTATIONS = (
    "operators.operatorframework.io.bundle.mediatype.v1",
    "operators.operatorframework.io.bundle.manifests.v1",
    "operators.operatorframework.io.bundle.metadata.v1",
    "operators.operatorframework.io.bundle.package.v1",
    "operators.operatorframework.io.bundle.channels.v1",
)
MEDIA_TYPES = ("registry+v1", "helm+v1", "plain+v1")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_EMAIL = re.compile(r"^(?:[^<>@\s]+ )?<?[^@\s<>]+@[^@\s<>]+>?$")
_URI = re.compile(r"^(/|[A-Za-z][A-Za-z0-9+.-]*:\S+$)")
_MIN_KUBE_WARNING = (
    "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, "
    "it would mean that your operator project can be distributed and installed in any cluster version "
    "available, which is not necessarily the case for all projects."
)


@dataclass
class Finding:
    level: str  # "error" or "warning"
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.level.upper()}: [{self.rule}] {self.message}"


@dataclass
class LoadedBundle:
    root: Path
    csv: dict[str, Any] | None = None
    crds: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """manifest file name -> its kind (or an error text)"""


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]

    @property
    def passed(self) -> bool:
        return not self.errors

    def error(self, rule: str, message: str) -> None:
        self.findings.append(Finding("error", rule, message))

    def warn(self, rule: str, message: str) -> None:
        self.findings.append(Finding("warning", rule, message))


# ------------------------------------------------------------------------------------------ loading


def load(root: Path, report: Report) -> LoadedBundle:
    import yaml

    bundle = LoadedBundle(root)
    metadata = root / "metadata" / "annotations.yaml"
    if metadata.is_file():
        try:
            doc = yaml.safe_load(metadata.read_text(encoding="utf-8")) or {}
            values = doc.get("annotations") if isinstance(doc, dict) else None
            if not isinstance(values, dict):
                report.error("bundle-format", f"{metadata}: no annotations map")
            else:
                bundle.annotations = {str(k): str(v) for k, v in values.items()}
        except yaml.YAMLError as err:
            report.error("bundle-format", f"{metadata}: not valid YAML: {err}")
    else:
        report.error("bundle-format", f"could not find {metadata.relative_to(root)} in the bundle directory")
    manifests = root / bundle.annotations.get(
        "operators.operatorframework.io.bundle.manifests.v1", "manifests/"
    )
    if not manifests.is_dir():
        report.error("bundle-format", f"the manifests directory {manifests} does not exist")
        return bundle
    for path in sorted(manifests.iterdir()):
        if not path.is_file():
            continue
        try:
            docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
        except yaml.YAMLError as err:
            report.error("bundle-format", f"{path.name}: not valid YAML: {err}")
            continue
        if len(docs) != 1 or not isinstance(docs[0], dict):
            report.error(
                "bundle-format", f"{path.name}: a manifest file holds exactly one object (found {len(docs)})"
            )
            continue
        obj = docs[0]
        kind = str(obj.get("kind", ""))
        bundle.files[path.name] = kind
        if kind == "ClusterServiceVersion":
            if bundle.csv is not None:
                report.error(
                    "bundle-format", f"more than one ClusterServiceVersion in the bundle ({path.name})"
                )
            bundle.csv = obj
        elif kind == "CustomResourceDefinition":
            bundle.crds.append(obj)
        else:
            bundle.objects.append(obj)
    if bundle.csv is None:
        report.error("bundle-format", f"unable to find a csv in bundle directory {manifests}")
    return bundle


# ----------------------------------------------------------------------------------- default suite


def check_format(b: LoadedBundle, report: Report) -> None:
    """operator-registry's ValidateBundleFormat and content checks: the annotations and the kinds."""
    if not b.annotations:
        return
    for key in REQUIRED_ANNOTATIONS:
        if not b.annotations.get(key):
            report.error("bundle-format", f"metadata/annotations.yaml: missing annotation {key}")
    media = b.annotations.get(REQUIRED_ANNOTATIONS[0])
    if media and media not in MEDIA_TYPES:
        report.error(
            "bundle-format",
            f"metadata/annotations.yaml: mediatype {media!r} is not one of {', '.join(MEDIA_TYPES)}",
        )
    for key, want in ((REQUIRED_ANNOTATIONS[1], "manifests/"), (REQUIRED_ANNOTATIONS[2], "metadata/")):
        value = b.annotations.get(key)
        if value and value != want:
            report.error("bundle-format", f"metadata/annotations.yaml: {key} is {value!r}, expected {want!r}")
    package = b.annotations.get(REQUIRED_ANNOTATIONS[3], "")
    if package and not _DNS1123.match(package):
        report.error("bundle-format", f"package name {package!r} is not a DNS-1123 subdomain")
    channels = [c.strip() for c in b.annotations.get(REQUIRED_ANNOTATIONS[4], "").split(",")]
    if b.annotations.get(REQUIRED_ANNOTATIONS[4]) and not all(channels):
        report.error(
            "bundle-format", "metadata/annotations.yaml: the channels list holds an empty channel name"
        )
    default = b.annotations.get("operators.operatorframework.io.bundle.channel.default.v1")
    if default is not None and default not in channels:
        report.error(
            "bundle-format", f"default channel {default!r} is not one of the bundle's channels {channels}"
        )
    for name, kind in b.files.items():
        if kind not in SUPPORTED_KINDS:
            report.error(
                "bundle-format", f"{name}: {kind or 'an object without kind'} is not a kind a bundle may hold"
            )


def _csv_name_problems(name: str) -> list[str]:
    problems = []
    if not name or len(name) > 253 or not _DNS1123.match(name):
        problems.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
        )
    if len(name) > 63 or not _LABEL_VALUE.match(name):
        problems.append("a valid label must be an empty string or 63 characters or less")
    return problems


def check_csv(csv: dict[str, Any], report: Report) -> None:
    """operator-framework/api's CSV validator."""
    rule = "csv"
    meta = csv.get("metadata") or {}
    spec = csv.get("spec") or {}
    name = str(meta.get("name", ""))
    if problems := _csv_name_problems(name):
        report.error(rule, f"metadata.name {name!r} is invalid: {','.join(problems)}")
    replaces = spec.get("replaces")
    if replaces and (problems := _csv_name_problems(str(replaces))):
        report.error(rule, f"spec.replaces {replaces!r} is invalid: {','.join(problems)}")
    if "/" not in str(csv.get("apiVersion", "")):
        report.error(rule, "'apiVersion' is missing")
    if not csv.get("kind"):
        report.error(rule, "'kind' is missing")
    # the fields without omitempty
    install = spec.get("install") or {}
    if not install.get("strategy"):
        report.error(rule, "required field missing: Spec.InstallStrategy.StrategyName")
    if install.get("strategy") and install.get("strategy") != "deployment":
        report.error(rule, f"install strategy {install.get('strategy')!r} is not 'deployment'")
    if not (install.get("spec") or {}).get("deployments"):
        report.error(rule, "required field missing: Spec.InstallStrategy.StrategySpec.DeploymentSpecs")
    if not spec.get("displayName"):
        report.error(rule, "required field missing: Spec.DisplayName")
    version = spec.get("version")
    if version is not None and parse_semver(str(version)) is None:
        report.error(rule, f"spec.version {version!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    _check_examples(csv, report)
    _check_install_modes(csv, report)
    min_kube = str(spec.get("minKubeVersion") or "").strip()
    if not min_kube:
        report.warn(rule, _MIN_KUBE_WARNING)
    elif parse_semver(min_kube) is None:
        report.error(rule, f"csv.Spec.MinKubeVersion has an invalid value: {min_kube}")
    for key in meta.get("annotations") or {}:
        for known in (
            "olm.operatorGroup",
            "olm.operatorNamespace",
            "olm.targetNamespaces",
            "olm.providedAPIs",
            "olm.skipRange",
        ):
            if key.lower() == known.lower() and key != known:
                report.error(rule, f"provided annotation {key} uses wrong case and should be {known} instead")
        if key == "olm.properties":
            report.warn(
                rule,
                "found olm.properties annotation, please define these properties in metadata/properties.yaml instead",
            )
    for index, owned in enumerate((spec.get("customresourcedefinitions") or {}).get("owned") or []):
        for key in ("name", "version", "kind"):
            if not owned.get(key):
                report.error(
                    rule, f"spec.customresourcedefinitions.owned[{index}]: required field missing: {key}"
                )
    deployments = {d.get("name") for d in (install.get("spec") or {}).get("deployments") or []}
    for index, hook in enumerate(spec.get("webhookdefinitions") or []):
        where = f"spec.webhookdefinitions[{index}]"
        if hook.get("type") not in (
            "ValidatingAdmissionWebhook",
            "MutatingAdmissionWebhook",
            "ConversionWebhook",
        ):
            report.error(rule, f"{where}: type {hook.get('type')!r} is not a webhook type")
        for key in ("generateName", "sideEffects", "admissionReviewVersions"):
            if not hook.get(key):
                report.error(rule, f"{where}: required field missing: {key}")
        if hook.get("deploymentName") not in deployments:
            report.error(
                rule,
                f"{where}: deploymentName {hook.get('deploymentName')!r} is not a deployment of the install strategy",
            )
        port = hook.get("containerPort", 443)
        if not isinstance(port, int) or not 1 <= port <= 65535:
            report.error(rule, f"{where}: containerPort {port!r} is not a port (1-65535)")


# The Secret cert-manager fills for `make deploy` (config/default/manager_webhook_patch.yaml mounts it).
WEBHOOK_CERT_SECRET = "webhook-server-cert"


def check_webhook_cert(csv: dict[str, Any], report: Report) -> None:
    """pyop's own rule: under OLM no cert-manager creates the Secret `make deploy`'s webhook patch
    mounts (OLM mounts a certificate of its own), so a Deployment that still mounts it never starts;
    config/manifests/kustomization.yaml's `[WEBHOOK]` patches remove the mount."""
    deployments = ((csv.get("spec") or {}).get("install") or {}).get("spec") or {}
    for dep in deployments.get("deployments") or []:
        pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        for volume in pod.get("volumes") or []:
            if (volume.get("secret") or {}).get("secretName") == WEBHOOK_CERT_SECRET:
                report.warn(
                    "csv",
                    f"deployment {dep.get('name')!r} mounts Secret {WEBHOOK_CERT_SECRET!r} (volume "
                    f"{volume.get('name')!r}), which cert-manager makes for `make deploy` and nothing makes "
                    "under OLM (it mounts its own webhook certificate): the Pod would never start; uncomment "
                    "the [WEBHOOK] patches in config/manifests/kustomization.yaml and run `make bundle` again",
                )


def _gvk_of(obj: dict[str, Any]) -> tuple[str, str, str]:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return group, version, str(obj.get("kind", ""))


def provided_apis(csv: dict[str, Any], report: Report | None = None) -> set[tuple[str, str, str]]:
    spec = csv.get("spec") or {}
    out = set()
    for owned in (spec.get("customresourcedefinitions") or {}).get("owned") or []:
        _plural, dot, group = str(owned.get("name", "")).partition(".")
        if not dot:
            if report is not None:
                report.error("csv", f"couldn't parse plural.group from crd name: {owned.get('name')}")
            continue
        out.add((group, str(owned.get("version", "")), str(owned.get("kind", ""))))
    for api in (spec.get("apiservicedefinitions") or {}).get("owned") or []:
        out.add((str(api.get("group", "")), str(api.get("version", "")), str(api.get("kind", ""))))
    return out


def examples(csv: dict[str, Any]) -> list[dict[str, Any]]:
    """The alm-examples (or olm.examples) objects; ValueError when they are not a JSON list."""
    annotations = (csv.get("metadata") or {}).get("annotations") or {}
    text = annotations.get("alm-examples", annotations.get("olm.examples", ""))
    if not text:
        return []
    value = json.loads(text)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError("the examples are not a list of objects")
    return value


def _check_examples(csv: dict[str, Any], report: Report) -> None:
    annotations = (csv.get("metadata") or {}).get("annotations") or {}
    if not annotations:
        report.warn("csv", "annotations not found")
        return
    if "alm-examples" not in annotations and "olm.examples" not in annotations:
        report.warn("csv", "example annotations not found")
        return
    if "alm-examples" in annotations and "olm.examples" in annotations:
        report.warn("csv", "both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`")
    try:
        found = examples(csv)
    except ValueError as err:
        report.error("csv", f"invalid example: {err}")
        return
    parsed = {_gvk_of(e) for e in found}
    provided = provided_apis(csv, report)
    for gvk in sorted(parsed - provided):
        report.error("csv", f"example must have a provided API: {'/'.join(p for p in gvk if p)}")
    for gvk in sorted(provided - parsed):
        report.warn("csv", f"provided API should have an example annotation: {'/'.join(gvk)}")


def _check_install_modes(csv: dict[str, Any], report: Report) -> None:
    spec = csv.get("spec") or {}
    modes = spec.get("installModes") or []
    if not modes:
        report.error("csv", "install modes not found")
        return
    seen: set[str] = set()
    known = {"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"}
    for mode in modes:
        kind = mode.get("type")
        if kind not in known:
            report.error("csv", f"install mode type {kind!r} is not one of {', '.join(sorted(known))}")
        if kind in seen:
            report.error("csv", "duplicate install modes present")
        seen.add(str(kind))
    if not any(m.get("supported") is True for m in modes):
        report.error("csv", "none of InstallModeTypes are supported")
    if any(h.get("conversionCRDs") for h in spec.get("webhookdefinitions") or []):
        only_all = all((m.get("type") == "AllNamespaces") == bool(m.get("supported")) for m in modes)
        if not only_all:
            report.error(
                "csv", "only AllNamespaces InstallModeType is supported when conversionCRDs is present"
            )


def check_crds(b: LoadedBundle, report: Report) -> None:
    """The CRD validator: each CRD as the API server would accept it."""
    from pyscaffold_op.apiextensions.crdvalidation import check_crd

    for crd in b.crds:
        name = (crd.get("metadata") or {}).get("name", "")
        if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
            report.error(
                "crd",
                f"{name}: apiVersion {crd.get('apiVersion')!r}: only apiextensions.k8s.io/v1 CRDs are served",
            )
            continue
        for problem in check_crd(crd):
            report.error("crd", f"{name}: {problem}")


def _crd_keys(crd: dict[str, Any]) -> list[tuple[str, str, str]]:
    spec = crd.get("spec") or {}
    kind = str((spec.get("names") or {}).get("kind", ""))
    return [(str(spec.get("group", "")), str(v.get("name", "")), kind) for v in spec.get("versions") or []]


def check_owned_crds(b: LoadedBundle, report: Report) -> None:
    """operator-framework/api's bundle validator: owned CRDs and the bundle's CRDs agree."""
    assert b.csv is not None
    keys: set[tuple[str, str, str]] = set()
    for crd in b.crds:
        for key in _crd_keys(crd):
            if key in keys:
                report.error("bundle", f"duplicate CRD {_show(key)} in bundle")
            keys.add(key)
    owned_gk = set()
    owned = provided_apis(
        {"spec": {"customresourcedefinitions": (b.csv.get("spec") or {}).get("customresourcedefinitions")}}
    )
    for key in sorted(owned):
        if key not in keys:
            report.error("bundle", f"owned CRD {_show(key)} not found in bundle")
        else:
            owned_gk.add((key[0], key[2]))
    for key in sorted(keys - owned):
        if (key[0], key[2]) not in owned_gk:
            report.error("bundle", f"CRD {_show(key)} is present in bundle but not defined in CSV")


def _show(key: tuple[str, str, str]) -> str:
    return f"{key[0]}/{key[1]}, Kind={key[2]}"


def check_service_accounts(b: LoadedBundle, report: Report) -> None:
    assert b.csv is not None
    install = ((b.csv.get("spec") or {}).get("install") or {}).get("spec") or {}
    names = {
        (((d.get("spec") or {}).get("template") or {}).get("spec") or {}).get("serviceAccountName")
        for d in install.get("deployments") or []
    }
    for obj in b.objects:
        name = (obj.get("metadata") or {}).get("name")
        if obj.get("kind") == "ServiceAccount" and obj.get("apiVersion") == "v1" and name in names:
            report.error(
                "bundle",
                f"invalid service account found in bundle. This service account {name} in your bundle is not valid, "
                "because a service account with the same name was already specified in your CSV.",
            )


def bundle_sizes(root: Path) -> tuple[int, int]:
    """(uncompressed, gzip-compressed) size of the bundle directory, as operator-framework/api counts."""
    raw = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                total += path.stat().st_size
                tar.add(path, arcname=str(path.relative_to(root)))
    return total, len(gzip.compress(raw.getvalue()))


def check_size(b: LoadedBundle, report: Report) -> None:
    size, compressed = bundle_sizes(b.root)
    if compressed > MAX_BUNDLE_SIZE:
        report.error(
            "bundle",
            f"maximum bundle compressed size with gzip size exceeded: size=~{_bytes(compressed)} , max={_bytes(MAX_BUNDLE_SIZE)}. Bundle uncompressed size is {_bytes(size)}",
        )
    elif compressed > MAX_BUNDLE_SIZE * 0.85:
        report.warn(
            "bundle",
            f"nearing maximum bundle compressed size with gzip: size=~{_bytes(compressed)} , max={_bytes(MAX_BUNDLE_SIZE)}. Bundle uncompressed size is {_bytes(size)}",
        )


def _bytes(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    value, unit = float(n), 0
    while value >= 1000 and unit < 5:
        value /= 1000
        unit += 1
    return f"{value:.1f} {'kMGTPE'[unit - 1]}B"


# -------------------------------------------------------------------------------- optional suites


def check_operatorhub(b: LoadedBundle, report: Report) -> None:
    """OperatorHub.io's requirements (operatorhub/v2, standard capabilities and categories)."""
    assert b.csv is not None
    rule = "operatorhub"
    spec = b.csv.get("spec") or {}
    annotations = (b.csv.get("metadata") or {}).get("annotations") or {}
    if not str((spec.get("provider") or {}).get("name", "")).strip():
        report.error(rule, "csv.Spec.Provider.Name not specified")
    for maintainer in spec.get("maintainers") or []:
        if not maintainer.get("name") or not maintainer.get("email"):
            report.error(rule, "csv.Spec.Maintainers elements should contain both name and email")
        if maintainer.get("email") and not _EMAIL.match(str(maintainer["email"])):
            report.error(rule, f"csv.Spec.Maintainers email {maintainer['email']} is invalid")
    for link in spec.get("links") or []:
        if not link.get("name") or not link.get("url"):
            report.error(rule, "csv.Spec.Links elements should contain both name and url")
        if link.get("url") and not _URI.match(str(link["url"])):
            report.error(rule, f"csv.Spec.Links url {link['url']} is invalid: invalid URI for request")
    if not spec.get("version"):
        report.error(rule, "csv.Spec.Version must be set")
    icons = spec.get("icon")
    if icons:
        if len(icons) != 1:
            report.error(rule, "csv.Spec.Icon should only have one element")
        icon = icons[0] or {}
        if not icon.get("mediatype") or not icon.get("base64data"):
            report.error(rule, "csv.Spec.Icon elements should contain both data and mediatype")
        if icon.get("mediatype") and icon["mediatype"] not in ICON_TYPES:
            report.error(rule, f"csv.Spec.Icon {icon['mediatype']} does not have a valid mediatype")
        if icon.get("base64data"):
            try:
                base64.b64decode(str(icon["base64data"]), validate=True)
            except ValueError:
                report.error(rule, "csv.Spec.Icon base64data is not valid base64")
    else:
        report.warn(rule, "csv.Spec.Icon not specified")
    min_kube = str(spec.get("minKubeVersion") or "").strip()
    if not min_kube:
        report.warn(rule, _MIN_KUBE_WARNING)
    elif parse_semver(min_kube) is None:
        report.error(rule, f"csv.Spec.MinKubeVersion has an invalid value: {min_kube}")
    capability = annotations.get("capabilities")
    if capability is not None and capability not in CAPABILITIES:
        report.error(
            rule, f'csv.Metadata.Annotations.Capabilities "{capability}" is not a valid capabilities level'
        )
    for category in (annotations.get("categories") or "").split(",") if annotations.get("categories") else []:
        if category.strip() not in CATEGORIES:
            report.error(
                rule,
                f'csv.Metadata.Annotations["categories"] value "{category.strip()}" is not in the set of standard categories',
            )
    max_k8s = annotations.get("operatorhub.io/ui-metadata-max-k8s-version")
    if max_k8s is not None and parse_semver(_full(str(max_k8s))) is None:
        report.error(
            rule, f"operatorhub.io/ui-metadata-max-k8s-version {max_k8s!r} is not a Kubernetes version"
        )
    if not str(spec.get("description") or "").strip():
        report.warn(rule, "csv.Spec.Description is empty: OperatorHub.io shows it as the operator's page")
    if not spec.get("keywords"):
        report.warn(rule, "csv.Spec.Keywords not specified")


def _full(version: str) -> str:
    parts = version.removeprefix("v").split(".")
    return ".".join([*parts, "0", "0"][:3]) if len(parts) < 3 else ".".join(parts)


def check_good_practices(b: LoadedBundle, report: Report) -> None:
    """operator-framework/api's good-practices validator."""
    assert b.csv is not None
    rule = "good-practices"
    spec = b.csv.get("spec") or {}
    install = (spec.get("install") or {}).get("spec") or {}
    deployments = install.get("deployments")
    if not deployments:
        report.error(rule, "unable to find a deployment to install in the CSV")
    for dep in deployments or []:
        pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod.get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            if not requests.get("cpu") or not requests.get("memory"):
                report.warn(
                    rule,
                    f"unable to find the resource requests for the container: ({container.get('name')}). It is recommended "
                    "to ensure the resource request for CPU and Memory.",
                )
    name = str((b.csv.get("metadata") or {}).get("name", ""))
    match = re.search(
        r"([0-9]+)\.([0-9]+)\.([0-9]+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+)?$", name
    )
    if match is None or parse_semver(match[0]) is None:
        report.warn(
            rule,
            f"csv.metadata.Name {name} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/",
        )
    if len(name.split(".v")) != 2:
        report.warn(
            rule,
            f"csv.metadata.Name {name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1",
        )
    channels = [c.strip() for c in b.annotations.get(REQUIRED_ANNOTATIONS[4], "").split(",") if c.strip()]
    default = b.annotations.get("operators.operatorframework.io.bundle.channel.default.v1", "")
    wrong = sorted(
        {c for c in [*channels, default] if c and not c.startswith(("candidate", "stable", "fast"))}
    )
    if wrong:
        report.warn(
            rule,
            f"channel(s) {wrong} are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming",
        )
    for perm in [*(install.get("permissions") or []), *(install.get("clusterPermissions") or [])]:
        for r in perm.get("rules") or []:
            if (
                "apiextensions.k8s.io" in (r.get("apiGroups") or [])
                and {"customresourcedefinitions", "*"} & set(r.get("resources") or [])
                and {"create", "*", "patch"} & set(r.get("verbs") or [])
            ):
                report.warn(
                    rule,
                    "CSV contains permissions to create CRD. An Operator shouldn't deploy or manage other operators.",
                )
    crds = spec.get("customresourcedefinitions") or {}
    for relation in ("owned", "required"):
        for owned in crds.get(relation) or []:
            if not owned.get("description"):
                report.error(rule, f"{relation} CRD {owned.get('name')!r} has an empty description")
    for crd in b.crds:
        versions = (crd.get("spec") or {}).get("versions") or []
        unserved = [v.get("name") for v in versions if not v.get("served")]
        if unserved:
            report.warn(
                rule,
                f"CRD {(crd.get('metadata') or {}).get('name')} has unserved versions {unserved}: remove them, or serve them",
            )


REMOVED_APIS = {
    # version the API is gone in -> (group/version, kind) pairs (kube's deprecation guide)
    "1.22.0": {("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"), ("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"), ("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration"), ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"), ("rbac.authorization.k8s.io/v1beta1", "Role"), ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"), ("rbac.authorization.k8s.io/v1beta1", "RoleBinding"), ("scheduling.k8s.io/v1beta1", "PriorityClass")},
    "1.25.0": {("policy/v1beta1", "PodDisruptionBudget"), ("policy/v1beta1", "PodSecurityPolicy"), ("batch/v1beta1", "CronJob"), ("autoscaling/v2beta1", "HorizontalPodAutoscaler")},
    "1.26.0": {("autoscaling/v2beta2", "HorizontalPodAutoscaler"), ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema")},
}  # fmt: skip


def check_deprecated_apis(b: LoadedBundle, report: Report, k8s_version: str | None) -> None:
    target = parse_semver(_full(k8s_version)) if k8s_version else None
    if k8s_version and target is None:
        report.error(
            "alpha-deprecated-apis", f"invalid value informed via the k8s key option : {k8s_version}"
        )
        return
    objs = [*b.crds, *b.objects]
    for removed_in, apis in REMOVED_APIS.items():
        found = sorted(
            {
                f"{o.get('kind')}: {(o.get('metadata') or {}).get('name')}"
                for o in objs
                if (o.get("apiVersion"), o.get("kind")) in apis
            }
        )
        if not found:
            continue
        message = f"this bundle is using APIs which were deprecated and removed in v{removed_in[:-2]}: {', '.join(found)}"
        removed = parse_semver(removed_in)
        if target is not None and removed is not None and target[:3] >= removed[:3]:
            report.error("alpha-deprecated-apis", message)
        else:
            report.warn("alpha-deprecated-apis", message)


# ------------------------------------------------------------------------------------------- entry


def selected(optional: str | None) -> tuple[str, ...]:
    """The optional validators `--select-optional` names: `suite=operatorframework` or `name=<validator>`."""
    from pyscaffold_op.errors import ValidationError

    if not optional:
        return ()
    key, eq, value = optional.partition("=")
    if eq and key == "suite" and value in SUITES:
        return SUITES[value]
    if eq and key == "name" and value in OPTIONAL:
        return (value,)
    raise ValidationError(
        f"--select-optional {optional!r}: use suite=operatorframework or name=<{'|'.join(OPTIONAL)}>"
    )


def validate_bundle(root: Path, optional: str | None = None, k8s_version: str | None = None) -> Report:
    """Every rule of the default suite, and the optional validators selected, on the bundle at `root`."""
    extra = selected(optional)
    report = Report()
    b = load(root, report)
    check_format(b, report)
    if b.csv is not None:
        check_csv(b.csv, report)
        check_webhook_cert(b.csv, report)
    check_crds(b, report)
    if b.csv is not None:
        check_owned_crds(b, report)
        check_service_accounts(b, report)
        check_size(b, report)
        if "operatorhub" in extra:
            check_operatorhub(b, report)
        if "good-practices" in extra:
            check_good_practices(b, report)
    if "alpha-deprecated-apis" in extra:
        check_deprecated_apis(b, report, k8s_version)
    return report
