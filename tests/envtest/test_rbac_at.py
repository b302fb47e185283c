"""The user story of RBAC mode (issue 25): the at operator (`testdata/at`) runs under its ServiceAccount
with the ClusterRole `make manifests` generated from its `+kubebuilder:rbac` markers, and reconciles an
At; with one rule taken out of that role (create pods) its reconcile fails and logs the server's 403."""

from __future__ import annotations

import copy
import json
import logging
import shutil
import ssl
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from pyscaffold_op.dev.golden_at import AT_DIR
from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.runtime import Manager, ManagerOptions, new_client
from pyscaffold_op.testing import eventually

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not AT_DIR.is_dir(), reason="testdata/at is missing"),
]

SA_NAMESPACE, SA_NAME = "system", "controller-manager"  # config/rbac/service_account.yaml
SA_USER = f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"


@pytest.fixture(scope="module")
def at_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the at project with its manifests made afresh, as `make manifests` does."""
    from pyscaffold_op.gen import generate_manifests

    project = tmp_path_factory.mktemp("at") / "at"
    shutil.copytree(AT_DIR, project, ignore=shutil.ignore_patterns("wheels", "__pycache__"))
    generate_manifests(project)
    yield project


@pytest.fixture
def at_code(at_project: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(at_project / "src"))
    from programming_kubernetes.api.v1alpha1 import at_types  # type: ignore[import-not-found]
    from programming_kubernetes.controllers import at_controller  # type: ignore[import-not-found]

    return at_types, at_controller


class Admin:
    """Raw requests as the environment's admin (what `kubectl apply` of config/rbac would do)."""

    def __init__(self, env: Environment) -> None:
        assert env.ca_pem is not None
        self.env = env
        self.ssl = ssl.create_default_context(cadata=env.ca_pem.decode())

    async def send(self, method: str, path: str, body: Any = None) -> Any:
        headers = {"Authorization": f"Bearer {self.env.token}"}
        async with (
            aiohttp.ClientSession() as s,
            s.request(method, self.env.url + path, json=body, headers=headers, ssl=self.ssl) as r,
        ):
            out = json.loads(await r.text())
            assert r.status < 300, out
            return out

    async def create(self, doc: dict[str, Any]) -> Any:
        group_version = doc["apiVersion"]
        base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        plural = doc["kind"].lower() + "s"
        ns = (doc.get("metadata") or {}).get("namespace")
        where = f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"
        return await self.send("POST", where, doc)


def _without_pod_create(role: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(role)
    for rule in out["rules"]:
        if rule.get("resources") == ["pods"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
    return out


async def _run_as_service_account(
    at_project: Path, at_code: Any, role: dict[str, Any], schedule: datetime
) -> tuple[Environment, Any]:
    """An RBAC-mode environment with the at CRD, the ServiceAccount, `role` and its binding; a
    manager running the at reconciler with the ServiceAccount's token; one At created by the admin."""
    at_types, at_controller = at_code
    rbac = at_project / "config" / "rbac"
    env = Environment(
        crd_paths=[at_project / "config" / "crd" / "bases"], kubelet=KubeletSimulator(), authorization="RBAC"
    )
    await env.start()
    admin = Admin(env)
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SA_NAMESPACE}})
    await admin.create(yaml.safe_load((rbac / "service_account.yaml").read_text()))
    await admin.create(role)
    await admin.create(yaml.safe_load((rbac / "role_binding.yaml").read_text()))
    token_request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    issued = await admin.send(
        "POST", f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts/{SA_NAME}/token", token_request
    )
    config = env.config_for(issued["status"]["token"])
    mgr = Manager(config, ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
    reconciler = at_controller.AtReconciler(client=mgr.client, recorder=mgr.get_event_recorder("at"))
    reconciler.setup_with_manager(mgr)
    at = at_types.At(
        metadata={"name": "story", "namespace": "default"},
        spec=at_types.AtSpec(
            schedule=schedule.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            command="echo hello",
        ),
    )
    return env, (mgr, at)


async def test_at_operator_reconciles_under_its_generated_role(at_project: Path, at_code: Any) -> None:
    role = yaml.safe_load((at_project / "config" / "rbac" / "role.yaml").read_text())
    env, (mgr, at) = await _run_as_service_account(
        at_project, at_code, role, datetime.now(UTC) - timedelta(hours=1)
    )
    try:
        async with mgr.running(), new_client(env.config) as admin:
            await admin.create(at)

            async def done() -> Any:
                current = await admin.get(type(at), "story", namespace="default")
                return current if current.status and current.status.phase == "DONE" else None

            finished = await eventually(done, timeout=15)
        assert finished.status.phase == "DONE"
    finally:
        await env.astop()


async def test_without_pod_create_the_reconcile_fails_with_the_403_logged(
    at_project: Path, at_code: Any, caplog: pytest.LogCaptureFixture
) -> None:
    role = _without_pod_create(yaml.safe_load((at_project / "config" / "rbac" / "role.yaml").read_text()))
    env, (mgr, at) = await _run_as_service_account(
        at_project, at_code, role, datetime.now(UTC) - timedelta(hours=1)
    )
    expected = (
        f'pods is forbidden: User "{SA_USER}" cannot create resource "pods" in API group "" '
        'in the namespace "default"'
    )
    caplog.set_level(logging.ERROR)
    try:
        async with mgr.running(), new_client(env.config) as admin:
            await admin.create(at)

            async def logged() -> bool | None:
                # "Reconciler error" with the client's Forbidden as its exception (formatted in caplog.text)
                return expected in caplog.text or None

            await eventually(logged, timeout=15)
            current = await admin.get(type(at), "story", namespace="default")
        assert not current.status or current.status.phase != "DONE"
    finally:
        await env.astop()
