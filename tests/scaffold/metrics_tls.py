"""The metrics TLS variant of a scaffolded project (cert-manager's certificate for the metrics server,
Prometheus verifying it): kubebuilder and pyop both ship it commented out in config/default and
config/prometheus; these are the lines a user uncomments (docs/runtime.md, "Metrics over TLS")."""

from __future__ import annotations

from pathlib import Path

# The metrics TLS variant (cert-manager's certificate for the metrics server, Prometheus verifying it):
# both scaffolds ship it commented out, and the same lines are uncommented on both sides.
METRICS_TLS_REPLACEMENTS = "Uncomment the following block to enable certificates for metrics"


def uncomment(text: str, first: str, count: int | None = None) -> str:
    """Drop the `#` of the comment lines from the one containing `first`: `count` of them, or every one
    up to the first line that is neither a comment nor blank."""
    out: list[str] = []
    active, done = False, 0
    for line in text.split("\n"):
        if not done and not active and line.startswith("#") and first in line:
            active = True
        if active and line.startswith("#"):
            line, done = line[1:], done + 1
            active = count is None or done < count
        elif active and line.strip():
            active = False
        out.append(line)
    assert done, f"no commented line with {first!r}"
    return "\n".join(out)


def enable_metrics_tls(root: Path) -> None:
    """What docs/runtime.md tells a user to uncomment: ../prometheus, the manager's certificate patch,
    the two metrics replacements, and the ServiceMonitor's TLS patch."""
    default = root / "config" / "default" / "kustomization.yaml"
    text = default.read_text().replace("#- ../prometheus\n", "- ../prometheus\n", 1)
    text = uncomment(text, "#- path: cert_metrics_manager_patch.yaml", 3)
    default.write_text(uncomment(text, METRICS_TLS_REPLACEMENTS))
    prometheus = root / "config" / "prometheus" / "kustomization.yaml"
    prometheus.write_text(uncomment(prometheus.read_text(), "#patches:", 4))
