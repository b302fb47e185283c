"""Turn the objects of `kubectl kustomize config/default` into Helm chart templates and default values.

Like kubebuilder's helm/v2-alpha: each object becomes one template file under a folder named after
its part of config/ (crd, rbac, manager, metrics, webhook, cert-manager, prometheus, network-policy),
keeps its kustomize name, is placed in `.Release.Namespace`, and is switched by the value of its
feature. The manager Deployment takes image, replicas, args, resources and scheduling from values.
The defaults reproduce config/default: rendering them gives kustomize's objects back, apart from the
differences docs/cli.md lists (Helm's labels, no Namespace object, the CRDs' keep annotation).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyscaffold_op.errors import ValidationError
from pyscaffold_op.scaffold.helm.emit import Expr, Include, Splice, ToYaml, When, emit, escape_actions

NAMESPACE = "{{ .Release.Namespace }}"
"""Inside a string (a DNS name, `ns/name`): the string around it is quoted."""
NAMESPACE_VALUE = "{{ .Release.Namespace | quote }}"
"""A whole value: quoted, so a namespace named `no` or `on` stays a string."""
HELPER_ROLE_SUFFIXES = ("-admin-role", "-editor-role", "-viewer-role")
RBAC_KINDS = {"ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
WEBHOOK_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
INJECT_CA = "cert-manager.io/inject-ca-from"
WEBHOOK_CERT_SECRET = "webhook-server-cert"
METRICS_CERT_SECRET = "metrics-server-cert"
"""cert-manager's Secret of the metrics certificate (config/certmanager/certificate-metrics.yaml)."""
WEBHOOK_ON = ".Values.webhook.enable"
METRICS_CERT_ON = "and .Values.certManager.enable .Values.metrics.enable"
"""When the manager serves cert-manager's metrics certificate: without cert-manager the Secret is never
made, and a pod mounting it would not start (kubebuilder's chart switches it the same way)."""


@dataclass
class Features:
    """What config/default deploys: the defaults of the chart's switches."""

    metrics: bool = False
    metrics_secure: bool = True
    metrics_port: int = 8443
    health_port: int | None = None
    """The port of --health-probe-bind-address (None: the manager is given no such flag)."""
    health_host: str = ""
    webhook_port: int = 9443
    """The manager's webhook-server container port (the manager's --webhook-port defaults to 9443)."""
    webhook_port_flag: bool = False
    """The manager is given --webhook-port (then the chart always passes it)."""
    webhook: bool = False
    cert_manager: bool = False
    metrics_cert_path: str | None = None
    """The manager's --metrics-cert-path (config/default/cert_metrics_manager_patch.yaml is on)."""
    prometheus: bool = False
    network_policy: bool = False
    rbac_helpers: bool = False


@dataclass
class Chart:
    templates: dict[str, str] = field(default_factory=dict)
    """Path under templates/ -> template text."""
    values: dict[str, Any] = field(default_factory=dict)
    namespace: str = ""
    deployment: str = ""
    """The manager Deployment's name."""


def build_chart(objects: list[dict[str, Any]], optional: list[dict[str, Any]], name_prefix: str) -> Chart:
    """The chart of `objects` (kustomize output) plus the `optional` ones kustomize leaves out, off."""
    deployments = [obj for obj in objects if obj.get("kind") == "Deployment"]
    if len(deployments) != 1:
        raise ValidationError(
            f"the manifests hold {len(deployments)} Deployments: a chart is made for exactly one manager"
        )
    namespace = _namespace(objects, deployments[0])
    kinds = {obj["kind"] for obj in objects}
    extra = [obj for obj in optional if obj["kind"] not in kinds]
    features = Features(
        webhook=any(_is_webhook_part(obj) for obj in objects),
        cert_manager=any(_api_group(obj) == "cert-manager.io" for obj in objects),
        prometheus="ServiceMonitor" in kinds,
        network_policy="NetworkPolicy" in kinds,
        rbac_helpers=any(_is_helper_role(obj) for obj in objects),
    )
    converter = _Converter(namespace, name_prefix, features)
    manager_values = converter.read_manager(deployments[0])
    chart = Chart(namespace=namespace, deployment=_name(deployments[0]))
    for obj in [*objects, *extra]:
        placed = converter.place(obj)
        if placed is None:
            continue
        path, condition, body = placed
        path = _unique(path, obj, chart.templates)
        text = emit(body)
        if condition:
            text = f"{{{{- if {condition} }}}}\n{text}{{{{- end }}}}\n"
        chart.templates[path] = text
    chart.values = default_values(manager_values, features)
    return chart


def default_values(manager: dict[str, Any], features: Features) -> dict[str, Any]:
    health = {"healthProbe": {"port": features.health_port}} if features.health_port else {}
    return {
        "manager": manager,
        **health,
        "labels": {},
        "annotations": {},
        "rbac": {"enable": True},
        "rbacHelpers": {"enable": features.rbac_helpers},
        "crd": {"enable": True, "keep": True},
        "metrics": {
            "enable": features.metrics,
            "secure": features.metrics_secure,
            "port": features.metrics_port,
        },
        "webhook": {"enable": features.webhook, "port": features.webhook_port},
        "certManager": {"enable": features.cert_manager},
        "prometheus": {"enable": features.prometheus},
        "networkPolicy": {"enable": features.network_policy},
    }


def _namespace(objects: list[dict[str, Any]], deployment: dict[str, Any]) -> str:
    for obj in objects:
        if obj["kind"] == "Namespace":
            return str(obj["metadata"]["name"])
    namespace = deployment.get("metadata", {}).get("namespace")
    if not namespace:
        counts = Counter(o.get("metadata", {}).get("namespace") for o in objects)
        counts.pop(None, None)
        if not counts:
            raise ValidationError("the manifests name no namespace: set `namespace:` in config/default")
        namespace = counts.most_common(1)[0][0]
    return str(namespace)


def _api_group(obj: dict[str, Any]) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rpartition("/")[0]


def _name(obj: dict[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def _is_helper_role(obj: dict[str, Any]) -> bool:
    # ClusterRoles, or Roles in a namespaced project (init --namespaced), as kubebuilder writes them
    return obj["kind"] in ("ClusterRole", "Role") and _name(obj).endswith(HELPER_ROLE_SUFFIXES)


def _is_webhook_part(obj: dict[str, Any]) -> bool:
    if obj["kind"] in WEBHOOK_KINDS:
        return True
    if obj["kind"] == "Service" and _name(obj).endswith("webhook-service"):
        return True
    conversion = obj.get("spec", {}).get("conversion") if obj["kind"] == "CustomResourceDefinition" else None
    return isinstance(conversion, dict) and conversion.get("strategy") == "Webhook"


def _unique(path: str, obj: dict[str, Any], taken: dict[str, str]) -> str:
    if path not in taken:
        return path
    stem = path.removesuffix(".yaml")
    return f"{stem}-{obj['kind'].lower()}.yaml"


class _Converter:
    def __init__(self, namespace: str, name_prefix: str, features: Features) -> None:
        self.namespace = namespace
        self.name_prefix = name_prefix
        self.features = features
        self._in_namespace = re.compile(rf"(?<![A-Za-z0-9-]){re.escape(namespace)}(?![A-Za-z0-9-])")

    # -- the generic rewrite: the kustomize namespace becomes the release's --------------------------

    def literal(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self.literal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.literal(item) for item in value]
        if isinstance(value, str) and self._in_namespace.search(value):
            if value == self.namespace:
                return Expr(NAMESPACE_VALUE)
            quoted = escape_actions(json.dumps(value, ensure_ascii=False))
            return Expr(self._in_namespace.sub(NAMESPACE, quoted))
        return value

    def metadata(self, obj: dict[str, Any], annotations: dict[Any, Any] | None = None) -> dict[Any, Any]:
        meta = obj.get("metadata", {})
        out: dict[Any, Any] = {"name": self.literal(meta["name"])}
        if "namespace" in meta:
            out["namespace"] = Expr(NAMESPACE_VALUE)
        labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != "app.kubernetes.io/managed-by"}
        out["labels"] = {**self.literal(labels), Include("chart.labels"): None}
        own: dict[Any, Any] = {}
        for key, value in (meta.get("annotations") or {}).items():
            if key == INJECT_CA:
                own[When(".Values.certManager.enable", {key: self.literal(value)})] = None
            else:
                own[key] = self.literal(value)
        own.update(annotations or {})
        extra = When(".Values.annotations", {Splice(".Values.annotations"): None})
        if any(isinstance(key, str) for key in own):
            out["annotations"] = {**own, extra: None}
        elif own:  # only switched ones: no `annotations:` left empty (null) when all are off
            conditions = " ".join(key.cond for key in own)
            out[When(f"or {conditions} .Values.annotations", {"annotations": {**own, extra: None}})] = None
        else:
            out[When(".Values.annotations", {"annotations": ToYaml(".Values.annotations")})] = None
        for key, value in meta.items():
            if key not in ("name", "namespace", "labels", "annotations"):
                out[key] = self.literal(value)
        return out

    def body(self, obj: dict[str, Any], **replaced: Any) -> dict[Any, Any]:
        out: dict[Any, Any] = {"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
        out["metadata"] = replaced.pop("metadata", None) or self.metadata(obj)
        for key, value in obj.items():
            if key in ("apiVersion", "kind", "metadata"):
                continue
            out[key] = replaced.pop(key) if key in replaced else self.literal(value)
        return out

    def file_name(self, obj: dict[str, Any]) -> str:
        return _name(obj).removeprefix(self.name_prefix) or obj["kind"].lower()

    # -- where each object goes, and what switches it ------------------------------------------------

    def place(self, obj: dict[str, Any]) -> tuple[str, str, dict[Any, Any]] | None:
        kind = obj["kind"]
        name = self.file_name(obj)
        if kind == "Namespace":
            return None  # Helm installs into --namespace (with --create-namespace)
        if kind == "CustomResourceDefinition":
            return f"crd/{_name(obj)}.yaml", ".Values.crd.enable", self.crd(obj)
        if kind in RBAC_KINDS:
            if _is_helper_role(obj):
                condition = ".Values.rbacHelpers.enable"
            elif "metrics-auth" in name or "metrics-reader" in name:
                condition = "and .Values.rbac.enable .Values.metrics.enable"
            else:
                condition = ".Values.rbac.enable"
            return f"rbac/{name}.yaml", condition, self.body(obj)
        if kind == "Deployment":
            return f"manager/{name}.yaml", "", self.deployment(obj)
        if kind == "Service" and name.endswith("metrics-service"):
            return f"metrics/{name}.yaml", ".Values.metrics.enable", self.metrics_service(obj)
        if kind == "Service" and name.endswith("webhook-service"):
            return f"webhook/{name}.yaml", ".Values.webhook.enable", self.webhook_service(obj)
        if kind in WEBHOOK_KINDS:
            return f"webhook/{name}.yaml", ".Values.webhook.enable", self.body(obj)
        if _api_group(obj) == "cert-manager.io":
            return f"cert-manager/{name}.yaml", ".Values.certManager.enable", self.body(obj)
        if kind == "ServiceMonitor":
            condition = "and .Values.prometheus.enable .Values.metrics.enable"
            return f"prometheus/{name}.yaml", condition, self.service_monitor(obj)
        if kind == "NetworkPolicy":
            condition = ".Values.networkPolicy.enable"
            if "webhook" in name:
                condition = "and .Values.networkPolicy.enable .Values.webhook.enable"
                return f"network-policy/{name}.yaml", condition, self.webhook_network_policy(obj)
            elif "metrics" in name:
                condition = "and .Values.networkPolicy.enable .Values.metrics.enable"
                return f"network-policy/{name}.yaml", condition, self.metrics_network_policy(obj)
            return f"network-policy/{name}.yaml", condition, self.body(obj)
        return f"extras/{name}.yaml", "", self.body(obj)

    def service_monitor(self, obj: dict[str, Any]) -> dict[Any, Any]:
        """An endpoint verifying the metrics server with cert-manager's CA (monitor_tls_patch.yaml) does so
        with certManager.enable; without cert-manager there is no CA to trust, so it skips verification,
        as the unpatched ServiceMonitor does (kubebuilder's chart: the same)."""
        spec = self.literal(obj.get("spec", {}))
        for endpoint in spec.get("endpoints", []):
            tls = endpoint.get("tlsConfig")
            if not isinstance(tls, dict) or (tls.get("ca") or {}).get("secret", {}).get("name") != (
                METRICS_CERT_SECRET
            ):
                continue
            without = {"tlsConfig": {"insecureSkipVerify": True}}
            endpoint[
                When(".Values.certManager.enable", {"tlsConfig": endpoint.pop("tlsConfig")}, without)
            ] = None
        return self.body(obj, spec=spec)

    def crd(self, obj: dict[str, Any]) -> dict[Any, Any]:
        keep = {When(".Values.crd.keep", {"helm.sh/resource-policy": "keep"}): None}
        spec: dict[Any, Any] = {}
        for key, value in obj.get("spec", {}).items():
            if key == "conversion" and isinstance(value, dict) and value.get("strategy") == "Webhook":
                spec[When(".Values.webhook.enable", {key: self.literal(value)})] = None
            else:
                spec[key] = self.literal(value)
        return self.body(obj, metadata=self.metadata(obj, keep), spec=spec)

    def metrics_service(self, obj: dict[str, Any]) -> dict[Any, Any]:
        spec = self.literal(obj.get("spec", {}))
        port = Expr("{{ .Values.metrics.port }}")
        for item in spec.get("ports", []):
            if item.get("port") == self.features.metrics_port:
                item["port"] = port
                if item.get("targetPort") == self.features.metrics_port:
                    item["targetPort"] = port
        return self.body(obj, spec=spec)

    def metrics_network_policy(self, obj: dict[str, Any]) -> dict[Any, Any]:
        spec = self.literal(obj.get("spec", {}))
        for rule in spec.get("ingress", []):
            for item in rule.get("ports", []):
                if item.get("port") == self.features.metrics_port:
                    item["port"] = Expr("{{ .Values.metrics.port }}")
        return self.body(obj, spec=spec)

    def webhook_service(self, obj: dict[str, Any]) -> dict[Any, Any]:
        spec = self.literal(obj.get("spec", {}))
        for item in spec.get("ports", []):
            if item.get("targetPort") == self.features.webhook_port:
                item["targetPort"] = Expr("{{ .Values.webhook.port }}")
        return self.body(obj, spec=spec)

    def webhook_network_policy(self, obj: dict[str, Any]) -> dict[Any, Any]:
        spec = self.literal(obj.get("spec", {}))
        for rule in spec.get("ingress", []):
            for item in rule.get("ports", []):
                if item.get("port") == self.features.webhook_port:
                    item["port"] = Expr("{{ .Values.webhook.port }}")
        return self.body(obj, spec=spec)

    # -- the manager ---------------------------------------------------------------------------------

    def read_manager(self, deployment: dict[str, Any]) -> dict[str, Any]:
        """The manager's values, read from the Deployment; also sets the metrics features."""
        pod = deployment["spec"]["template"]["spec"]
        container = _manager_container(pod)
        args: list[str] = []
        for arg in container.get("args") or []:
            text = str(arg)
            if text.startswith("--metrics-bind-address="):
                address = text.partition("=")[2]
                port = address.rpartition(":")[2]
                self.features.metrics = address not in ("0", "") and port.isdigit() and port != "0"
                if self.features.metrics:
                    self.features.metrics_port = int(port)
            elif text.startswith("--health-probe-bind-address=") and _port(text) is not None:
                address = text.partition("=")[2]
                self.features.health_host = address.rpartition(":")[0]
                self.features.health_port = _port(text)
            elif text.startswith("--webhook-port=") and _port(text) is not None:
                self.features.webhook_port_flag = True
            elif text.startswith("--metrics-cert-path="):
                self.features.metrics_cert_path = text.partition("=")[2]
            elif text in ("--no-metrics-secure", "--metrics-secure=false"):
                self.features.metrics_secure = False
            elif text not in ("--metrics-secure", "--metrics-secure=true"):
                args.append(text)
        for port in container.get("ports") or []:
            if port.get("name") == "webhook-server" and isinstance(port.get("containerPort"), int):
                self.features.webhook_port = port["containerPort"]
        repository, tag = _split_image(str(container.get("image", "")))
        return {
            "replicas": deployment["spec"].get("replicas", 1),
            "image": {
                "repository": repository,
                "tag": tag,
                "pullPolicy": container.get("imagePullPolicy", ""),
            },
            "args": args,
            "env": copy.deepcopy(container.get("env") or []),
            "resources": copy.deepcopy(container.get("resources") or {}),
            "securityContext": copy.deepcopy(container.get("securityContext") or {}),
            "podSecurityContext": copy.deepcopy(pod.get("securityContext") or {}),
            "imagePullSecrets": copy.deepcopy(pod.get("imagePullSecrets") or []),
            "nodeSelector": copy.deepcopy(pod.get("nodeSelector") or {}),
            "tolerations": copy.deepcopy(pod.get("tolerations") or []),
            "affinity": copy.deepcopy(pod.get("affinity") or {}),
        }

    def deployment(self, obj: dict[str, Any]) -> dict[Any, Any]:
        raw_pod = obj["spec"]["template"]["spec"]
        raw_container = _manager_container(raw_pod)
        # the certificate volumes and their mounts are there only with what makes their Secret
        secret_on = {WEBHOOK_CERT_SECRET: WEBHOOK_ON, METRICS_CERT_SECRET: METRICS_CERT_ON}
        volume_on: dict[str, str] = {}
        for volume in raw_pod.get("volumes") or []:
            condition = secret_on.get(str((volume.get("secret") or {}).get("secretName")))
            if condition is not None:
                volume_on[str(volume.get("name"))] = condition
        container: dict[Any, Any] = {}
        valued = {"env": "env", "resources": "resources", "securityContext": "securityContext"}
        for key, value in raw_container.items():
            if key == "image":
                container[key] = Expr(
                    '"{{ .Values.manager.image.repository }}'
                    '{{- if .Values.manager.image.tag }}:{{ .Values.manager.image.tag }}{{- end }}"'
                )
                container[_from_values("imagePullPolicy", ".Values.manager.image.pullPolicy")] = None
            elif key == "imagePullPolicy":
                continue
            elif key == "args":
                container[key] = self.manager_args()
            elif key == "ports":
                ports = [self._container_port(item) for item in value]
                container.update(
                    self._switched_list(
                        key, ports, lambda p: WEBHOOK_ON if p.get("name") == "webhook-server" else None
                    )
                )
            elif key in ("livenessProbe", "readinessProbe", "startupProbe"):
                container[key] = self._probe(value)
            elif key == "volumeMounts":
                container.update(self._switched_list(key, value, lambda m: volume_on.get(str(m.get("name")))))
            elif key in valued:
                container[_from_values(key, f".Values.manager.{valued.pop(key)}")] = None
            else:
                container[key] = self.literal(value)
        if "args" not in raw_container:
            container["args"] = self.manager_args()
        for key, values_key in valued.items():
            container[_from_values(key, f".Values.manager.{values_key}")] = None
        containers = [
            container if item is raw_container else self.literal(item) for item in raw_pod["containers"]
        ]
        pod: dict[Any, Any] = {}
        pod_valued = {
            "securityContext": "podSecurityContext",
            "imagePullSecrets": "imagePullSecrets",
            "nodeSelector": "nodeSelector",
            "tolerations": "tolerations",
            "affinity": "affinity",
        }
        for key, value in raw_pod.items():
            if key == "containers":
                pod[key] = containers
            elif key == "volumes":
                pod.update(self._switched_list(key, value, lambda v: volume_on.get(str(v.get("name")))))
            elif key in pod_valued:
                pod[_from_values(key, f".Values.manager.{pod_valued.pop(key)}")] = None
            else:
                pod[key] = self.literal(value)
        for key, values_key in pod_valued.items():
            pod[_from_values(key, f".Values.manager.{values_key}")] = None
        template = {**self.literal(obj["spec"]["template"]), "spec": pod}
        spec: dict[Any, Any] = {}
        for key, value in obj["spec"].items():
            if key == "replicas":
                spec[key] = Expr("{{ .Values.manager.replicas }}")
            elif key == "template":
                spec[key] = template
            else:
                spec[key] = self.literal(value)
        if "replicas" not in spec:
            spec["replicas"] = Expr("{{ .Values.manager.replicas }}")
        return self.body(obj, spec=spec)

    def manager_args(self) -> list[Any]:
        metrics = [
            Expr("--metrics-bind-address=:{{ .Values.metrics.port }}"),
            When("not .Values.metrics.secure", ["--no-metrics-secure"]),
        ]
        args: list[Any] = [
            When(".Values.metrics.enable", metrics),
            When(".Values.manager.args", [Splice(".Values.manager.args")]),
        ]
        if self.features.health_port is not None:
            host = escape_actions(self.features.health_host)
            args.append(Expr(f'"--health-probe-bind-address={host}:{{{{ .Values.healthProbe.port }}}}"'))
        if self.features.metrics_cert_path is not None:
            args.append(When(METRICS_CERT_ON, [f"--metrics-cert-path={self.features.metrics_cert_path}"]))
        webhook_port = Expr("--webhook-port={{ .Values.webhook.port }}")
        if self.features.webhook_port_flag:
            args.append(When(".Values.webhook.enable", [webhook_port]))
        elif self.features.webhook:
            # the manager listens on 9443 unless told: the flag only when the value says otherwise
            args.append(
                When("and .Values.webhook.enable (ne (int .Values.webhook.port) 9443)", [webhook_port])
            )
        return args

    def _container_port(self, item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        item = dict(item)
        port = item.get("containerPort")
        if item.get("name") == "webhook-server" and port == self.features.webhook_port:
            item["containerPort"] = Expr("{{ .Values.webhook.port }}")
        elif port is not None and port == self.features.health_port:
            item["containerPort"] = Expr("{{ .Values.healthProbe.port }}")
        return item

    def _probe(self, probe: Any) -> Any:
        out = self.literal(probe)
        get = out.get("httpGet") if isinstance(out, dict) else None
        if (
            isinstance(get, dict)
            and self.features.health_port
            and get.get("port") == self.features.health_port
        ):
            get["port"] = Expr("{{ .Values.healthProbe.port }}")
        return out

    def _switched_list(
        self, key: str, items: list[Any], condition_of: Callable[[Any], str | None]
    ) -> dict[Any, Any]:
        """`key: items` in their order, each item `condition_of` names (webhook.enable, ...) only when
        that holds; an empty list while no item is on."""
        conditions = [condition_of(item) for item in items]
        switched = sorted({c for c in conditions if c is not None})
        if not switched:
            return {key: [self.literal(item) for item in items]}
        if len(switched) == 1 and None not in conditions:
            return {When(switched[0], {key: [self.literal(item) for item in items]}, {key: []}): None}
        out = [
            self.literal(item) if condition is None else When(condition, [self.literal(item)])
            for item, condition in zip(items, conditions, strict=True)
        ]
        if None in conditions:
            return {key: out}
        any_on = "or " + " ".join(f"({condition})" for condition in switched)
        return {When(any_on, {key: out}, {key: []}): None}


def _port(arg: str) -> int | None:
    """The port of `--flag=[host]:port` (None unless it is a number above 0)."""
    port = arg.partition("=")[2].rpartition(":")[2]
    return int(port) if port.isdigit() and int(port) > 0 else None


def _from_values(key: str, path: str) -> When:
    """`key: <toYaml of the value>`, left out while the value is empty."""
    if key == "imagePullPolicy":
        return When(path, {key: Expr(f"{{{{ {path} }}}}")})
    return When(path, {key: ToYaml(path)})


def _manager_container(pod: dict[str, Any]) -> dict[str, Any]:
    containers = pod.get("containers") or []
    if not containers:
        raise ValidationError("the manager Deployment has no containers")
    return next((c for c in containers if c.get("name") == "manager"), containers[0])


def _split_image(image: str) -> tuple[str, str]:
    """repository and tag; a digest stays in the repository (tag "")."""
    if "@" in image:
        return image, ""
    head, _, last = image.rpartition("/")
    if ":" in last:
        name, _, tag = last.partition(":")
        return (f"{head}/{name}" if head else name), tag
    return image, ""
