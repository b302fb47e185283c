"""kubebuilder as the oracle of the scaffolder: the same commands given to the real `kubebuilder` (go/v4)
and to `pyop`, then `make manifests` on each side (controller-gen on the Go side) and `kubectl kustomize
config/default` compared object by object (kind, name, namespace; then field by field).

Every difference is either fixed or listed in ALLOWED with its reason (docs/cli.md, "Compared with
kubebuilder", says the same to users). kubebuilder's projects are cached under
bin/.kubebuilder-cache/<key>/, the key made of the commands and the versions of kubebuilder and
controller-gen, so reruns do not run `go mod tidy` again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.oracles import REPO_ROOT, missing_reason, oracle_bin
from pyscaffold_op.gen import generate_manifests

from .conftest import RunPyop
from .metrics_tls import enable_metrics_tls

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

KUBECTL = shutil.which("kubectl")
GO = shutil.which("go")
CACHE = REPO_ROOT / "bin" / ".kubebuilder-cache"

Command = list[str]
Key = tuple[str, str, str]

# kubebuilder's reference sequences (its test/testdata/generate.sh and the getting-started tutorial),
# written as kubebuilder takes them; the project folder's name is the project's name on both sides.
SCENARIOS: dict[str, list[Command]] = {
    name: [line.split() for line in text.replace("\\\n", " ").strip().splitlines()]
    for name, text in {
        "demo": """
            init --domain example.com --repo example.com/demo
            create api --group crew --version v1 --kind Captain --resource --controller
            create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation
            create api --group crew --version v1 --kind FirstMate --resource --controller
            create api --group crew --version v1 --kind Admiral --plural=admirales \\
              --resource --controller --namespaced=false
            create webhook --group crew --version v1 --kind Admiral --plural=admirales --defaulting
        """,
        "multigroup": """
            init --domain testproject.org --repo sigs.k8s.io/kubebuilder/testdata/multigroup
            edit --multigroup=true
            create api --group crew --version v1 --kind Captain --resource --controller
            create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation
            create api --group ship --version v1beta1 --kind Frigate --resource --controller
            create api --group ship --version v1 --kind Destroyer --resource --controller --namespaced=false
            create webhook --group ship --version v1 --kind Destroyer --defaulting
            create api --group sea-creatures --version v1beta1 --kind Kraken --resource --controller
            create api --group foo.policy --version v1 --kind HealthCheckPolicy --resource --controller
        """,
        # project-v4-with-plugins' deploy-image kinds: their CRDs must be controller-gen's, attribute
        # for attribute (issue 35: `size` was required with minimum 1 and maximum 3)
        "with-plugins": """
            init --domain testproject.org --repo sigs.k8s.io/kubebuilder/testdata/project-v4-with-plugins
            create api --group example.com --version v1alpha1 --kind Memcached \
              --image=memcached:1.6.26-alpine3.19 \
              --image-container-command=memcached,--memory-limit=64,-o,modern,-v \
              --image-container-port=11211 --run-as-user=1001 --plugins=deploy-image/v1-alpha
            create api --group example.com --version v1alpha1 --kind Busybox --image=busybox:1.36.1 \
              --plugins=deploy-image/v1-alpha
        """,
        "external": """
            init --domain testproject.org --repo sigs.k8s.io/kubebuilder/testdata/external
            create api --group cert-manager --version v1 --kind Certificate --controller=true \\
              --resource=false --external-api-domain=io \\
              --external-api-path=github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1 \\
              --external-api-module=github.com/cert-manager/cert-manager@v1.21.1
            create webhook --group cert-manager --version v1 --kind Issuer --defaulting \\
              --external-api-path=github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1 \\
              --external-api-domain=io --external-api-module=github.com/cert-manager/cert-manager@v1.21.1
        """,
    }.items()
}


@dataclass(frozen=True)
class Allowed:
    kind: str
    """A regular expression over `Kind/name`."""
    path: str
    """A regular expression over the field path (`.spec.template...`), matched from the start."""
    reason: str


# The differences that stay, with the reason (docs/cli.md, "Compared with kubebuilder").
ALLOWED: list[Allowed] = [
    Allowed(
        "CustomResourceDefinition/.*",
        r"\.metadata\.annotations\.(controller-gen\.kubebuilder\.io|pyop\.io)/version$",
        "the generator's own version annotation: controller-gen's, or pyop's",
    ),
    Allowed(
        "CustomResourceDefinition/.*",
        r"\.spec\.versions\[\d+\]\.schema\.openAPIV3Schema\.(properties\.\w+\.)*description$",
        "descriptions come from the scaffolded types' comments: Go comments on the fields there, Python "
        "docstrings of the classes here (ending with a period, naming captain_types.py)",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.containers\[0\]\.command$",
        "the manager runs as `python -m <package>`, not a /manager binary",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.containers\[0\]\.resources\.(limits|requests)\.memory$",
        "a Python manager needs more memory than a Go one (256Mi limit, 96Mi request)",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.terminationGracePeriodSeconds$",
        "40 s: longer than the manager's 30 s graceful shutdown, so the kubelet does not cut a drain short",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.containers\[0\]\.args$",
        "kubebuilder's webhook patch passes --webhook-cert-path and --webhook-port; pyop's manager has both "
        "flags with the same defaults (/tmp/k8s-webhook-server/serving-certs, 9443), so its patch leaves "
        "them out",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.(volumes|containers\[0\]\.volumeMounts)\[\d+\]\.(name|secret\.defaultMode)$",
        "the webhook certificate volume is named `cert` (kubebuilder: webhook-certs) and sets "
        "defaultMode 420 (the API server's default, so the applied object is the same)",
    ),
    Allowed(
        "Deployment/.*-controller-manager",
        r"\.spec\.template\.spec\.containers\[0\]\.ports\[[01]\]\.(containerPort|name)$",
        "the order of the container ports: pyop's webhook patch is a strategic merge patch, which puts "
        "webhook-server before health (kubebuilder's JSON patch appends it)",
    ),
    Allowed(
        "ClusterRole(Binding)?/.*-metrics-(auth-role|reader|auth-rolebinding)",
        r"\.metadata\.labels$",
        "pyop labels the metrics RBAC objects like every other object of config/ (app.kubernetes.io/name, "
        "managed-by), so `kubectl get -l app.kubernetes.io/name=<project>` finds them too",
    ),
]


def kubebuilder_args(command: Command) -> Command:
    if command[0] == "init":
        return [*command, "--plugins", "go/v4", "--skip-go-version-check"]
    if command[0] == "create":
        return [*command, "--make=false"]
    return command


def pyop_args(command: Command) -> Command:
    """kubebuilder's `--flag=true|false` as click spells it; no `make manifests` until the end."""
    out: Command = []
    for arg in command:
        flag, eq, value = arg.partition("=")
        if eq and value in ("true", "false"):
            out.append(flag if value == "true" else "--no-" + flag.removeprefix("--"))
        else:
            out.append(arg)
    return [*out, "--no-make"] if command[0] in ("create", "edit") else out


def _version(tool: Path, *args: str) -> str:
    run = subprocess.run([str(tool), *args], capture_output=True, text=True, check=False)
    return run.stdout.strip()


def kustomize(root: Path) -> str:
    assert KUBECTL is not None
    run = subprocess.run(
        [KUBECTL, "kustomize", "config/default"], cwd=root, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def kubebuilder_build(name: str, commands: list[Command], *, metrics_tls: bool = False) -> Path:
    """The cache folder of kubebuilder's project: `kustomize.yaml` (`kubectl kustomize config/default`)
    and the project itself under `project/<name>/`; built when it is not there."""
    tools = {tool: oracle_bin(tool) for tool in ("kubebuilder", "controller-gen")}
    for tool, path in tools.items():
        if path is None:
            pytest.skip(missing_reason(tool))
    if GO is None:
        pytest.skip("go is not installed (kubebuilder runs go mod tidy)")
    kubebuilder, controller_gen = tools["kubebuilder"], tools["controller-gen"]
    assert kubebuilder is not None and controller_gen is not None
    key_source = {
        "name": name,
        "commands": [kubebuilder_args(c) for c in commands],
        "kubebuilder": _version(kubebuilder, "version"),
        "controller-gen": _version(controller_gen, "--version"),
        **({"metrics-tls": True} if metrics_tls else {}),  # the keys of the plain builds stay as they were
    }
    key = hashlib.sha256(json.dumps(key_source, sort_keys=True).encode()).hexdigest()[:16]
    cached = CACHE / f"{name}-{key}"
    if (cached / "kustomize.yaml").is_file():
        return cached
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE))
    try:
        text = _kubebuilder_project(
            work / "project" / name, commands, kubebuilder, controller_gen, metrics_tls=metrics_tls
        )
        (work / "kustomize.yaml").write_text(text)
        (work / "key.json").write_text(json.dumps(key_source, indent=2) + "\n")
        work.rename(cached)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone after the rename; a failed or lost race's leftovers
    return cached


def _kubebuilder_project(
    root: Path, commands: list[Command], kubebuilder: Path, controller_gen: Path, *, metrics_tls: bool
) -> str:
    root.mkdir(parents=True)
    env = {**os.environ, "GOFLAGS": "-buildvcs=false"}
    for command in commands:
        run = subprocess.run(
            [str(kubebuilder), *kubebuilder_args(command)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, f"kubebuilder {' '.join(command)}:\n{run.stdout}\n{run.stderr}"
    # what `make manifests` runs (kubebuilder's Makefile would download its own controller-gen)
    generate = [
        str(controller_gen),
        "rbac:roleName=manager-role",
        "crd",
        "webhook",
        "paths=./...",
        "output:crd:artifacts:config=config/crd/bases",
    ]
    run = subprocess.run(generate, cwd=root, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    if metrics_tls:
        enable_metrics_tls(root)
    return kustomize(root)


def pyop_build(
    pyop: RunPyop, name: str, commands: list[Command], tmp_path: Path, *, metrics_tls: bool = False
) -> str:
    root = tmp_path / name
    root.mkdir()
    for command in commands:
        run = pyop(*pyop_args(command), cwd=root)
        assert run.code == 0, f"pyop {' '.join(command)}:\n{run.out}\n{run.err}"
    generate_manifests(root)
    if metrics_tls:
        enable_metrics_tls(root)
    return kustomize(root)


def _other_kinds(project: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in project.get("resources", []) if r.get("core") or r.get("external")]


def keyed(text: str) -> dict[Key, dict[str, Any]]:
    out: dict[Key, dict[str, Any]] = {}
    for obj in yaml.safe_load_all(text):
        if obj:
            meta = obj["metadata"]
            out[(obj["kind"], meta["name"], meta.get("namespace", ""))] = obj
    return out


def field_diffs(theirs: Any, ours: Any, path: str = "") -> list[tuple[str, str]]:
    """(path, what differs): maps key by key, lists of equal length item by item, else the whole value."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        out: list[tuple[str, str]] = []
        for key in sorted(set(theirs) | set(ours), key=str):
            sub = f"{path}.{key}"
            if key not in ours:
                out.append((sub, f"kubebuilder {_short(theirs[key])} / pyop <none>"))
            elif key not in theirs:
                out.append((sub, f"kubebuilder <none> / pyop {_short(ours[key])}"))
            else:
                out += field_diffs(theirs[key], ours[key], sub)
        return out
    if isinstance(theirs, list) and isinstance(ours, list) and len(theirs) == len(ours):
        return [
            d
            for i, (a, b) in enumerate(zip(theirs, ours, strict=True))
            for d in field_diffs(a, b, f"{path}[{i}]")
        ]
    if theirs != ours:
        return [(path, f"kubebuilder {_short(theirs)} / pyop {_short(ours)}")]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def allowed_by(kind_name: str, path: str) -> Allowed | None:
    for entry in ALLOWED:
        if re.fullmatch(entry.kind, kind_name) and re.match(entry.path, path):
            return entry
    return None


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kustomize_output_equals_kubebuilders(pyop: RunPyop, tmp_path: Path, name: str) -> None:
    commands = SCENARIOS[name]
    built = kubebuilder_build(name, commands)
    theirs = keyed((built / "kustomize.yaml").read_text())
    ours = keyed(pyop_build(pyop, name, commands, tmp_path))
    # PROJECT: the entries of kinds that are not the project's own are kubebuilder's, key for key (an
    # own kind's `path` is its Go package there, its Python module here)
    their_project = yaml.safe_load((built / "project" / name / "PROJECT").read_text())
    our_project = yaml.safe_load((tmp_path / name / "PROJECT").read_text())
    assert _other_kinds(our_project) == _other_kinds(their_project)
    assert our_project.get("plugins") == their_project.get("plugins")
    assert_same_objects(name, theirs, ours)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kustomize_output_with_metrics_tls_equals_kubebuilders(pyop: RunPyop, tmp_path: Path) -> None:
    """The demo with metrics served under cert-manager's certificate and Prometheus verifying it."""
    commands = SCENARIOS["demo"]
    theirs = keyed((kubebuilder_build("demo", commands, metrics_tls=True) / "kustomize.yaml").read_text())
    ours = keyed(pyop_build(pyop, "demo", commands, tmp_path, metrics_tls=True))
    assert ("ServiceMonitor", "demo-controller-manager-metrics-monitor", "demo-system") in ours
    monitor = ours["ServiceMonitor", "demo-controller-manager-metrics-monitor", "demo-system"]
    tls = monitor["spec"]["endpoints"][0]["tlsConfig"]
    assert tls["serverName"] == "demo-controller-manager-metrics-service.demo-system.svc"
    assert tls["ca"] == {"secret": {"name": "metrics-server-cert", "key": "ca.crt"}}
    assert tls["insecureSkipVerify"] is False
    for objects in (theirs, ours):
        _order_volumes(objects["Deployment", "demo-controller-manager", "demo-system"])
    assert_same_objects("demo with metrics TLS", theirs, ours)


def _order_volumes(deployment: dict[str, Any]) -> None:
    """The volumes by Secret, the mounts by path: kubebuilder's JSON patches append the webhook's volume
    after the metrics one, pyop's webhook patch (strategic merge) puts it first; the kubelet reads
    neither list in order, and the webhook volume's own name differs anyway (`cert`, in ALLOWED)."""
    pod = deployment["spec"]["template"]["spec"]
    pod["volumes"].sort(key=lambda v: v["secret"]["secretName"])
    pod["containers"][0]["volumeMounts"].sort(key=lambda m: m["mountPath"])


def assert_same_objects(
    name: str, theirs: dict[Key, dict[str, Any]], ours: dict[Key, dict[str, Any]]
) -> None:
    wrong: list[str] = []
    allowed: dict[str, int] = {}
    identical = differing = 0
    for key in sorted(set(theirs) | set(ours)):
        label = f"{key[0]}/{key[1]}"
        if key not in ours or key not in theirs:
            side = "kubebuilder" if key not in ours else "pyop"
            entry = allowed_by(label, "")
            if entry is None:
                wrong.append(f"{label} ({key[2] or 'cluster'}): only in {side}'s output")
            else:
                allowed[entry.reason] = allowed.get(entry.reason, 0) + 1
            continue
        diffs = field_diffs(theirs[key], ours[key])
        if not diffs:
            identical += 1
            continue
        differing += 1
        for path, detail in diffs:
            entry = allowed_by(label, path)
            if entry is None:
                wrong.append(f"{label}: {path}: {detail}")
            else:
                allowed[entry.reason] = allowed.get(entry.reason, 0) + 1
    compared = len(set(theirs) & set(ours))
    print(
        f"\n{name}: {compared} objects compared, {identical} identical, {differing} differing; "
        f"{len(set(theirs) ^ set(ours))} in one output only; {len(wrong)} unexplained differences"
    )
    for reason, count in sorted(allowed.items()):
        print(f"  allowed ({count}): {reason}")
    assert not wrong, f"{len(wrong)} differences from kubebuilder:\n" + "\n".join(wrong)


def test_pyop_takes_kubebuilders_spelling_of_boolean_flags() -> None:
    assert pyop_args(["edit", "--multigroup=true"]) == ["edit", "--multigroup", "--no-make"]
    assert pyop_args(["create", "api", "--namespaced=false", "--plural=admirales"]) == [
        "create",
        "api",
        "--no-namespaced",
        "--plural=admirales",
        "--no-make",
    ]
