"""End-to-end tests of an operator project: the manager run the way users run it (`tests/e2e/`).

kubebuilder's e2e suite builds the image, deploys it to a Kind cluster and talks to it with kubectl;
a scaffold's `make test-e2e` does the same here, but needs no cluster by default:

* `emulator` (the default): `make envtest` serves pyop's emulator with the project's CRDs and webhook
  configurations, `make run` starts the manager against it with its usual flags (its own webhook
  server and local CA, secure metrics), both as subprocesses of the test session;
* `real` (`make test-e2e ENVTEST=real`, `pytest --envtest=real` or `PYOP_ENVTEST=real`): the same over
  the real kube-apiserver + etcd (`make envtest ENVTEST_FLAGS=--real`); no kubelet runs Pods there;
* `cluster` (`ENVTEST=cluster`): over `pyop envtest serve --cluster` (kube-controller-manager,
  kube-scheduler and kwok beside them: kwok's fake node runs Pods);
* `kubeconfig` (`USE_EXISTING_CLUSTER=true`, controller-runtime's name for it): the cluster of your
  kubeconfig, as kubebuilder's e2e: `make docker-build`, `kind load` when `KIND_CLUSTER` is set,
  `make install` and `make deploy`; the manager runs in its Pod, metrics are read by a curl Pod, and
  webhooks need cert-manager in the cluster. This path is not run by pyop's own CI (no cluster image
  there): it does what kubebuilder's scaffolded e2e does, with the same commands.

`start_operator(root, target)` returns a running `Operator`; the suite's tests read its
`kubeconfig`, scrape its `/metrics` with a service account token through the metrics filter's
TokenReview and SubjectAccessReview, and apply samples.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "EXISTING_CLUSTER_ENV",
    "Operator",
    "Sample",
    "Target",
    "curl_answer",
    "metric_value",
    "samples",
    "start_operator",
    "target",
    "webhook_paths",
]

Target = Literal["emulator", "real", "cluster", "kubeconfig"]
SERVE_FLAGS = {"emulator": "", "real": "--real", "cluster": "--cluster"}  # `make envtest ENVTEST_FLAGS=...`
EXISTING_CLUSTER_ENV = "USE_EXISTING_CLUSTER"
START_TIMEOUT = 180.0  # make manifests + a server + the manager's caches, on a loaded CI machine


def target(envtest_option: str | None = None) -> Target:
    """Where the e2e suite runs: `USE_EXISTING_CLUSTER=true` is the kubeconfig's cluster; otherwise the
    envtest choice (`--envtest`, else $PYOP_ENVTEST): `real` or the emulator."""
    if os.environ.get(EXISTING_CLUSTER_ENV, "").lower() == "true":
        return "kubeconfig"
    chosen = envtest_option or os.environ.get("PYOP_ENVTEST") or "emulator"
    return "real" if chosen == "real" else "cluster" if chosen == "cluster" else "emulator"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Sample:
    """A sample of config/samples, with what the e2e suite expects of it."""

    path: Path
    obj: dict[str, Any]  # the document, to create as it is
    kind: str
    plural: str  # from the kind's CRD in config/crd/bases
    namespaced: bool
    controller: str | None  # the controller reconciling the kind (PROJECT `controller: true`), by name
    webhooks: tuple[str, ...]  # the admission webhook paths an API server calls when it is created


def samples(root: Path) -> list[Sample]:
    """The samples `kubectl apply -k config/samples` applies (its kustomization's resources)."""
    import yaml

    kustomization = root / "config" / "samples" / "kustomization.yaml"
    if not kustomization.is_file():
        return []
    listed = (yaml.safe_load(kustomization.read_text()) or {}).get("resources") or []
    project = yaml.safe_load((root / "PROJECT").read_text()) or {}
    controlled = {
        (r.get("group"), r.get("kind")) for r in project.get("resources") or [] if r.get("controller")
    }
    served: dict[tuple[str, str], tuple[str, bool]] = {}  # (group, kind) -> (plural, namespaced)
    for crd in sorted((root / "config" / "crd" / "bases").glob("*.yaml")):
        spec = (yaml.safe_load(crd.read_text()) or {}).get("spec") or {}
        names = spec.get("names") or {}
        served[(spec.get("group", ""), names.get("kind", ""))] = (
            names.get("plural", ""),
            spec.get("scope", "Namespaced") == "Namespaced",
        )
    hooks = webhook_paths(root)
    out = []
    for name in listed:
        path = root / "config" / "samples" / str(name)
        obj = yaml.safe_load(path.read_text())
        group, kind = str(obj["apiVersion"]).rpartition("/")[0], str(obj["kind"])
        plural, namespaced = served.get((group, kind)) or (kind.lower() + "s", True)
        short_group = group.split(".", 1)[0] if group else ""
        called = tuple(
            hook
            for hook, rules in hooks.items()
            if any(
                group in (r.get("apiGroups") or [])
                and plural in (r.get("resources") or [])
                and ({"CREATE", "*"} & set(r.get("operations") or []))
                for r in rules
            )
        )
        controller = (
            kind.lower() if (short_group, kind) in controlled or (group, kind) in controlled else None
        )
        out.append(Sample(path, obj, kind, plural, namespaced, controller, called))
    return out


def webhook_paths(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Each admission webhook path of config/webhook/manifests.yaml with the rules it is called for."""
    import yaml

    manifest = root / "config" / "webhook" / "manifests.yaml"
    if not manifest.is_file():
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for doc in yaml.safe_load_all(manifest.read_text()):
        for hook in (doc or {}).get("webhooks") or []:
            path = ((hook.get("clientConfig") or {}).get("service") or {}).get("path")
            if path:
                out.setdefault(path, []).extend(hook.get("rules") or [])
    return out


def metric_value(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples in Prometheus text whose labels include `labels` (0 when none)."""
    from prometheus_client.parser import text_string_to_metric_families

    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


@dataclass
class Operator:
    """The manager under test and the server it runs against."""

    root: Path
    target: Target
    kubeconfig: Path
    metrics_url: str  # https://127.0.0.1:<port>/metrics, or the in-cluster Service's URL
    # who may read /metrics once bound to the metrics-reader ClusterRole (namespace, service account)
    metrics_namespace: str
    metrics_service_account: str
    metrics_reader_role: str
    runs_pods: bool  # a kubelet runs Pods (the emulator's simulator, or the cluster's)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _logs: dict[str, Path] = field(default_factory=dict)
    _tmp: Path | None = None

    def logs(self, name: str = "manager") -> str:
        """What `make run` (name `manager`) or `make envtest` (`server`) printed so far; in a cluster,
        the manager Pod's log."""
        if self.target == "kubeconfig" and name == "manager":
            return _kubectl(
                self, "logs", "-n", self.metrics_namespace, "-l", "control-plane=controller-manager"
            )
        path = self._logs.get(name)
        return path.read_text(errors="replace") if path is not None and path.is_file() else ""

    def manager_running(self) -> bool:
        if self.target == "kubeconfig":
            phase = _kubectl(
                self, "get", "pods", "-n", self.metrics_namespace, "-l", "control-plane=controller-manager",
                "-o", "jsonpath={.items[*].status.phase}",
            )  # fmt: skip
            return phase.split() == ["Running"]
        return bool(self._procs) and self._procs[-1].poll() is None

    async def scrape(self, token: str | None) -> tuple[int, str]:
        """GET /metrics with `token` as bearer (none: anonymous), as Prometheus would: (status, body)."""
        if self.target == "kubeconfig":
            return await asyncio.to_thread(_curl_pod, self, token)
        return await asyncio.to_thread(_https_get, self.metrics_url, token)

    async def metrics_token(self, *, allowed: bool = True) -> str:
        """A token of a service account allowed to read /metrics (created and bound here, as
        kubebuilder's e2e binds `<project>-metrics-reader`); `allowed=False`: of one never bound."""
        from pyscaffold_op.runtime import load_config, new_client

        account = self.metrics_service_account if allowed else f"{self.metrics_service_account}-unbound"
        client = new_client(load_config(kubeconfig=str(self.kubeconfig)))
        try:
            await _ensure(client, _namespace(self.metrics_namespace))
            await _ensure(client, _service_account(self.metrics_namespace, account))
            if allowed and self.target != "kubeconfig":  # `make deploy` installs the role; here, the file
                await _ensure(client, _yaml(self.root / "config" / "rbac" / "metrics_reader_role.yaml"))
            if allowed:
                await _ensure(client, _binding(self.metrics_reader_role, self.metrics_namespace, account))
            path = f"/api/v1/namespaces/{self.metrics_namespace}/serviceaccounts/{account}/token"
            body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
            answer = await client.transport.request("POST", path, body=body.encode())
            return str(json.loads(answer)["status"]["token"])
        finally:
            await client.close()

    async def create(self, sample: Sample) -> bool:
        """Create a sample as it is written (in the kubeconfig's namespace when it names none), as
        `kubectl create -f` would; True once it exists (one there already, from a retry after a lost
        answer, counts), so `eventually(lambda: operator.create(sample))` retries a refusal."""
        from pyscaffold_op.runtime import AlreadyExists, load_config, new_client

        config = load_config(kubeconfig=str(self.kubeconfig))
        namespace = sample.obj.get("metadata", {}).get("namespace") or config.namespace or "default"
        prefix = f"/apis/{sample.obj['apiVersion']}" if "/" in sample.obj["apiVersion"] else "/api/v1"
        path = (
            f"{prefix}/namespaces/{namespace}/{sample.plural}"
            if sample.namespaced
            else f"{prefix}/{sample.plural}"
        )
        client = new_client(config)
        try:
            with contextlib.suppress(AlreadyExists):
                await client.transport.request("POST", path, body=json.dumps(sample.obj).encode())
            return True
        finally:
            await client.close()

    def stop(self) -> None:
        for proc in reversed(self._procs):
            _stop(proc)
        self._procs.clear()
        if self.target == "kubeconfig":  # kubebuilder's AfterAll: what the suite added, then the operator
            _kubectl(
                self,
                "delete",
                "pod",
                "curl-metrics",
                "-n",
                self.metrics_namespace,
                "--ignore-not-found",
                check=False,
            )
            _kubectl(
                self,
                "delete",
                "clusterrolebinding",
                f"{self.metrics_reader_role}-e2e",
                "--ignore-not-found",
                check=False,
            )
            for target_ in ("undeploy", "uninstall"):
                _make(self.root, target_, "ignore-not-found=true", check=False)
        if self._tmp is not None:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


@contextlib.contextmanager
def start_operator(root: Path, where: Target) -> Iterator[Operator]:
    """The project at `root` running against `where` until the block ends (everything stopped then)."""
    operator = _deploy(root) if where == "kubeconfig" else _run_locally(root, where)
    try:
        yield operator
    finally:
        operator.stop()


def _run_locally(root: Path, where: Target) -> Operator:
    """`make envtest` (the emulator, or `--real`), then `make run` against it, as a user runs them."""
    tmp = Path(tempfile.mkdtemp(prefix="pyop-e2e-"))
    kubeconfig, certs = tmp / "kubeconfig", tmp / "webhook-certs"
    webhook, metrics, health = free_port(), free_port(), free_port()
    operator = Operator(
        root=root,
        target=where,
        kubeconfig=kubeconfig,
        metrics_url=f"https://127.0.0.1:{metrics}/metrics",
        metrics_namespace="system",  # config/rbac's names, which `make deploy` prefixes
        metrics_service_account="controller-manager",
        metrics_reader_role="metrics-reader",
        runs_pods=where != "real",  # the emulator's kubelet simulator, the cluster's kwok
        _tmp=tmp,
    )
    try:
        server = _start_make(
            operator, "server", "envtest",
            f"ENVTEST_KUBECONFIG={kubeconfig}", f"WEBHOOK_URL=https://127.0.0.1:{webhook}",
            f"WEBHOOK_CA={certs / 'ca.crt'}", f"ENVTEST_FLAGS={SERVE_FLAGS[where]}",
        )  # fmt: skip
        _wait(lambda: kubeconfig.is_file() and kubeconfig.stat().st_size > 0, server, operator, "server")
        flags = [
            f"--metrics-bind-address=127.0.0.1:{metrics}",
            f"--health-probe-bind-address=127.0.0.1:{health}",
            f"--webhook-port={webhook}",
            f"--webhook-cert-path={certs}",
        ]
        manager = _start_make(
            operator, "manager", "run", f"ARGS={shlex.join(flags)}", env={"KUBECONFIG": str(kubeconfig)}
        )
        _wait(lambda: _ready(health), manager, operator, "manager")
    except BaseException:
        operator.stop()
        raise
    return operator


def _deploy(root: Path) -> Operator:
    """kubebuilder's e2e steps against the kubeconfig's cluster: build, load, install, deploy."""
    from pyscaffold_op.project import load_project

    name = load_project(root).project_name
    image = os.environ.get("E2E_IMG", f"example.com/{name}:v0.0.1")
    kubeconfig = Path(
        os.environ.get("KUBECONFIG", str(Path.home() / ".kube" / "config")).split(os.pathsep)[0]
    )
    namespace = f"{name}-system"
    operator = Operator(
        root=root,
        target="kubeconfig",
        kubeconfig=kubeconfig,
        metrics_url=f"https://{name}-controller-manager-metrics-service.{namespace}.svc.cluster.local:8443/metrics",
        metrics_namespace=namespace,
        metrics_service_account=f"{name}-controller-manager",
        metrics_reader_role=f"{name}-metrics-reader",
        runs_pods=True,
    )
    _make(root, "docker-build", f"IMG={image}")
    if os.environ.get("KIND_CLUSTER"):
        _run(["kind", "load", "docker-image", image, "--name", os.environ["KIND_CLUSTER"]], root)
    _make(root, "install")
    _make(root, "deploy", f"IMG={image}")
    deadline = time.monotonic() + START_TIMEOUT
    while not operator.manager_running():
        if time.monotonic() > deadline:
            operator.stop()
            raise AssertionError(f"the controller-manager Pod is not Running after {START_TIMEOUT:.0f}s")
        time.sleep(2)
    return operator


# -- processes ---------------------------------------------------------------------------------------


def _make_vars() -> list[str]:
    """This interpreter for the Makefile's PYTHON and pyop (its venv need not be activated)."""
    return [f"PYTHON={sys.executable}", f"PYOP={sys.executable} -m pyscaffold_op"]


def _make(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return _run(["make", *args, *_make_vars()], root, check=check)


def _run(argv: list[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    if check and done.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def _start_make(
    operator: Operator, name: str, target_: str, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`make <target_> <args>` in its own process group (stopped whole), its output in a log file."""
    assert operator._tmp is not None
    log = operator._logs[name] = operator._tmp / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", target_, *args, *_make_vars()],
            cwd=operator.root,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    operator._procs.append(proc)
    return proc


def _wait(ready: Any, proc: subprocess.Popen[bytes], operator: Operator, name: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():
        if proc.poll() is not None:
            raise AssertionError(f"`make` for the {name} exited ({proc.returncode}):\n{operator.logs(name)}")
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the {name} is not ready after {START_TIMEOUT:.0f}s:\n{operator.logs(name)}"
            )
        time.sleep(0.1)


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return int(resp.status) == 200
    except (OSError, urllib.error.URLError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group (make, its shell, the manager or server), then SIGKILL."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# -- metrics -----------------------------------------------------------------------------------------


def _https_get(url: str, token: str | None) -> tuple[int, str]:
    """Like `curl -k`: the manager's metrics certificate is self-signed (make run)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def _curl_pod(operator: Operator, token: str | None) -> tuple[int, str]:
    """kubebuilder's curl-metrics Pod: the metrics Service is reachable only inside the cluster."""
    pod = "curl-metrics"
    _kubectl(
        operator, "delete", "pod", pod, "-n", operator.metrics_namespace, "--ignore-not-found", check=False
    )
    auth = f"-H 'Authorization: Bearer {token}' " if token else ""
    overrides = {
        "spec": {
            "containers": [
                {
                    "name": "curl",
                    "image": "curlimages/curl:latest",
                    "command": ["/bin/sh", "-c"],
                    "args": [f"curl -s -k -w '\\n%{{http_code}}' {auth}{operator.metrics_url}"],
                    "securityContext": {
                        "readOnlyRootFilesystem": True,
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                        "runAsNonRoot": True,
                        "runAsUser": 1000,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                }
            ],
            "serviceAccountName": operator.metrics_service_account,
        }
    }
    _kubectl(
        operator, "run", pod, "--restart=Never", "-n", operator.metrics_namespace,
        "--image=curlimages/curl:latest", "--overrides", json.dumps(overrides),
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while _kubectl(
        operator, "get", "pod", pod, "-n", operator.metrics_namespace, "-o", "jsonpath={.status.phase}"
    ) not in (
        "Succeeded",
        "Failed",
    ):
        if time.monotonic() > deadline:
            raise AssertionError("the curl-metrics Pod did not finish in 5 minutes")
        time.sleep(2)
    return curl_answer(_kubectl(operator, "logs", pod, "-n", operator.metrics_namespace))


def curl_answer(output: str) -> tuple[int, str]:
    """(status, body) of `curl -s -w '\\n%{http_code}'`'s output: the status is its last line."""
    body, _, status = output.rpartition("\n")
    return (int(status), body) if status.strip().isdigit() else (0, output)


def _kubectl(operator: Operator, *args: str, check: bool = True) -> str:
    done = _run(["kubectl", "--kubeconfig", str(operator.kubeconfig), *args], operator.root, check=check)
    return done.stdout.strip()


# -- objects -----------------------------------------------------------------------------------------


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _service_account(namespace: str, name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}


def _binding(role: str, namespace: str, account: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{role}-e2e"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    found: dict[str, Any] = yaml.safe_load(path.read_text())
    return found


async def _ensure(client: Any, obj: dict[str, Any]) -> None:
    """Create `obj` (one of the kinds above) unless it exists."""
    from pyscaffold_op.models.core_v1 import Namespace, ServiceAccount
    from pyscaffold_op.models.rbac_v1 import ClusterRole, ClusterRoleBinding
    from pyscaffold_op.runtime import AlreadyExists

    model = {m.__name__: m for m in (Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding)}[obj["kind"]]
    with contextlib.suppress(AlreadyExists):
        await client.create(model.model_validate(obj))
