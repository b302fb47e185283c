"""The chart's own files: Chart.yaml, values.yaml (commented), .helmignore and templates/_helpers.tpl."""

from __future__ import annotations

from typing import Any

from pyscaffold_op import yamlio

HELMIGNORE = """\
# Patterns to ignore when building packages (`helm package`).
.DS_Store
.git/
.gitignore
*.swp
*.bak
*.tmp
*.orig
*~
.idea/
.vscode/
"""

HELPERS = """\
{{/*
Labels of every object of the chart: Helm's own, then .Values.labels.
*/}}
{{- define "chart.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | quote }}
{{- if .Values.labels }}
{{ toYaml .Values.labels }}
{{- end }}
{{- end }}
"""

# values.yaml, section by section: the comment above each top-level key
COMMENTS: dict[str, str] = {
    "manager": "The controller manager Deployment.",
    "labels": "Labels added to every object (keys must differ from the objects' own labels).",
    "annotations": "Annotations added to every object.",
    "rbac": "The manager's ServiceAccount, ClusterRole, leader election Role and their bindings. Off: bring\n"
    "your own (the Deployment still runs as the ServiceAccount named in templates/manager).",
    "rbacHelpers": "Admin, editor and viewer ClusterRoles for each API (not used by the manager itself).",
    "crd": "The CustomResourceDefinitions; keep: Helm leaves them in place on uninstall.",
    "metrics": "The /metrics endpoint: its Service, port, and the RBAC that guards it (secure: HTTPS with\n"
    "TokenReview and SubjectAccessReview; false serves plain HTTP).",
    "healthProbe": "The port of the manager's /healthz and /readyz (its flag, container port and probes).",
    "webhook": "Admission and conversion webhooks: their configurations, Service, and the serving\n"
    "certificate's volume in the manager (Secret webhook-server-cert); port: the manager's webhook server.",
    "certManager": "cert-manager's Issuer and Certificates, and CA injection into webhooks and CRDs.",
    "prometheus": "A prometheus-operator ServiceMonitor for the metrics (needs metrics.enable).",
    "networkPolicy": "NetworkPolicies that admit traffic to the metrics and webhook ports only.",
}

MANAGER_COMMENTS: dict[str, str] = {
    "args": "Flags of the manager; the metrics flags come from metrics.*",
    "env": "Environment variables of the manager container.",
    "resources": "Requests and limits of the manager container.",
    "securityContext": "The manager container's securityContext.",
    "podSecurityContext": "The pod's securityContext.",
}


def chart_yaml(project_name: str) -> str:
    return (
        "apiVersion: v2\n"
        f"name: {yamlio.scalar(project_name)}\n"
        f"description: {yamlio.scalar(f'A Helm chart to distribute {project_name}')}\n"
        "type: application\n"
        "version: 0.1.0\n"
        'appVersion: "0.1.0"\n'
        "keywords:\n- kubernetes\n- operator\n"
        "annotations:\n  pyop.io/generated-by: pyop\n"
    )


def values_yaml(values: dict[str, Any]) -> str:
    """values.yaml with a comment above each section and each manager setting."""
    parts = ["# Default values of the chart, read from config/default by `pyop create helm-chart`.\n"]
    for key, value in values.items():
        parts.append("\n" + _comment(COMMENTS.get(key, ""), 0))
        if key != "manager":
            parts.append(_dump({key: value}))
            continue
        parts.append("manager:\n")
        for sub, subvalue in value.items():
            if sub in MANAGER_COMMENTS:
                parts.append(_comment(MANAGER_COMMENTS[sub], 2))
            parts.append(_indent(_dump({sub: subvalue}), 2))
    return "".join(parts)


def _dump(value: Any) -> str:
    return yamlio.dump(value, sort_keys=False, width=100)


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(True))


def _comment(text: str, spaces: int) -> str:
    return "".join(f"{' ' * spaces}# {line}\n" for line in text.splitlines())


def notes(project_name: str, deployment: str) -> str:
    """templates/NOTES.txt: what `helm install` prints once the release is installed."""
    name = project_name.replace("{{", "")
    deployment = deployment.replace("{{", "")
    return f"""\
{name} is installed: release {{{{ .Release.Name }}}} in namespace {{{{ .Release.Namespace }}}}.

The manager:
  kubectl --namespace {{{{ .Release.Namespace }}}} rollout status deployment/{deployment}
  kubectl --namespace {{{{ .Release.Namespace }}}} logs deployment/{deployment} --follow
{{{{- if .Values.crd.enable }}}}

Its APIs (kubectl explain <kind>):
  kubectl get crds -l app.kubernetes.io/instance={{{{ .Release.Name }}}}
{{{{- end }}}}
{{{{- if and .Values.webhook.enable (not .Values.certManager.enable) }}}}

The webhooks are on but certManager.enable is false: the Secret webhook-server-cert must hold a
certificate for the webhook Service, and the webhook configurations its CA (caBundle).
{{{{- end }}}}
{{{{- if .Values.certManager.enable }}}}

cert-manager must be installed in the cluster (https://cert-manager.io/docs/installation/).
{{{{- end }}}}
"""
