"""The kubelet simulator: scheduling, phases, exit codes by rule, restarts."""

from __future__ import annotations

from typing import Any

import httpx2
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Node, Pod

from pyscaffold_op.envtest import Environment, KubeletSimulator, PodOutcome, default_rule
from pyscaffold_op.envtest.controllers.kubelet import echo_output
from pyscaffold_op.testing import eventually
from tests.envtest.lightkube_client import lightkube_client


def pod(name: str, *command: str, restart: str = "Never") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name),
        spec=PodSpec(
            restartPolicy=restart,
            containers=[Container(name="main", image="busybox", command=list(command) or None)],
        ),
    )


def test_default_rule() -> None:
    def spec(cmd: list[str], args: list[str] | None = None) -> dict[str, Any]:
        return {"spec": {"containers": [{"name": "c", "command": cmd, "args": args or []}]}}

    assert default_rule(spec(["sh", "-c", "exit 3"])).exit_code == 3
    assert default_rule(spec(["/bin/sh", "-c"], ["echo hi; exit 7"])).exit_code == 7
    assert default_rule(spec(["false"])).exit_code == 1
    assert default_rule(spec(["sh", "-c", "false"])).exit_code == 1
    assert default_rule(spec(["echo", "hello"])).exit_code == 0
    # long-running: no command (the image's server), long sleeps, tail -f, loops, servers
    assert default_rule({"spec": {"containers": [{"name": "c"}]}}).exit_code is None
    assert default_rule(spec(["sleep", "300"])).exit_code is None
    assert default_rule(spec(["sleep", "infinity"])).exit_code is None
    assert default_rule(spec(["sh", "-c", "echo start; sleep 3600"])).exit_code is None
    assert default_rule(spec(["sh", "-c", "while true; do date; sleep 1; done"])).exit_code is None
    assert default_rule(spec(["tail", "-f", "/dev/null"])).exit_code is None
    assert default_rule(spec(["/manager"], ["--leader-elect"])).exit_code is None
    # short commands still end; an unknown command ends when the Pod does not restart Always
    assert default_rule(spec(["sleep", "2"])).exit_code == 0
    perl = {"name": "c", "command": ["perl", "-e", "1"]}
    never = {"spec": {"restartPolicy": "Never", "containers": [perl]}}
    assert default_rule(never).exit_code == 0


async def test_pod_phases() -> None:
    async with Environment(kubelet=KubeletSimulator()) as env:
        client = lightkube_client(env)
        assert (await client.get(Node, "envtest-node")).status.conditions[0].type == "Ready"
        await client.create(pod("ok", "sh", "-c", "echo hi"))
        await client.create(pod("bad", "sh", "-c", "exit 4"))

        async def finished(name: str, phase: str) -> Pod:
            p = await client.get(Pod, name)
            assert p.status.phase == phase, p.status.phase
            return p

        ok = await eventually(lambda: finished("ok", "Succeeded"))
        assert ok.spec.nodeName == "envtest-node" and ok.status.podIP and ok.status.startTime
        assert ok.status.containerStatuses[0].state.terminated.reason == "Completed"
        bad = await eventually(lambda: finished("bad", "Failed"))
        term = bad.status.containerStatuses[0].state.terminated
        assert term.exitCode == 4 and term.reason == "Error"
        await client.close()


async def test_binding_a_pod_keeps_its_generation() -> None:
    """kube-apiserver's binding sets spec.nodeName outside the update strategy: generation stays 1
    (found by the workload corpus: the cluster's scheduled Pods are at generation 1)."""
    async with Environment(kubelet=KubeletSimulator()) as env:
        client = lightkube_client(env)
        await client.create(pod("run", "sleep", "300"))

        async def running(name: str) -> Pod:
            p = await client.get(Pod, name)
            assert p.status.phase == "Running"
            return p

        assert (await eventually(lambda: running("run"))).metadata.generation == 1
        await client.close()
    async with Environment() as env:  # no kubelet: the test binds, as a scheduler does
        client = lightkube_client(env)
        await client.create(pod("bind", "sleep", "300"))
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "bind"},
            "target": {"name": "n1"},
        }
        import httpx2

        async with httpx2.AsyncClient(base_url=env.url) as http:
            r = await http.post("/api/v1/namespaces/default/pods/bind/binding", json=binding)
            assert r.status_code == 201, r.text
        bound = await client.get(Pod, "bind")
        assert bound.spec.nodeName == "n1" and bound.metadata.generation == 1
        await client.close()


async def test_running_then_rule_and_restarts() -> None:
    seen: list[str] = []

    def rule(p: dict[str, Any]) -> PodOutcome:
        seen.append(p["metadata"]["name"])
        return PodOutcome(exit_code=2, run_seconds=0.05, message="boom")

    async with Environment(kubelet=KubeletSimulator(rule, pending_seconds=0.01, restart_backoff=0.01)) as env:
        client = lightkube_client(env)
        await client.create(pod("crashy", restart="OnFailure"))

        async def restarted() -> Pod:
            p = await client.get(Pod, "crashy")
            cs = p.status.containerStatuses
            assert cs and cs[0].restartCount >= 2, cs
            assert p.status.phase == "Running"
            return p

        p = await eventually(restarted)
        assert p.status.containerStatuses[0].lastState.terminated.exitCode == 2
        assert "crashy" in seen
        await client.delete(Pod, "crashy")
        await client.close()


async def test_no_kubelet_pods_stay_pending() -> None:
    async with Environment() as env:
        client = lightkube_client(env)
        created = await client.create(pod("idle"))
        assert created.status.phase == "Pending" and created.spec.nodeName is None
        await client.close()


def test_echo_output() -> None:
    def spec(*cmd: str) -> dict[str, Any]:
        return {"spec": {"containers": [{"name": "c", "command": list(cmd)}]}}

    assert echo_output(spec("/bin/sh", "-c", 'echo "hello world"')) == "hello world\n"
    assert echo_output(spec("sh", "-c", "echo a && echo -n b; exit 1")) == "a\nb"
    assert echo_output(spec("echo", "x", "y")) == "x y\n"
    assert echo_output(spec("sleep", "1")) == ""


async def test_pod_logs() -> None:

    async with Environment(kubelet=KubeletSimulator(pending_seconds=0.01, run_seconds=0.01)) as env:
        client = lightkube_client(env)
        await client.create(pod("talk", "/bin/sh", "-c", 'echo "hello world"'))
        async with httpx2.AsyncClient(base_url=env.url) as http:
            path = "/api/v1/namespaces/default/pods/talk/log"

            async def logs() -> str:
                r = await http.get(path)
                assert r.status_code == 200, r.text
                return r.text

            assert await eventually(logs) == "hello world\n"
            assert (await http.get(path, params={"container": "nope"})).status_code == 400
        await client.close()
    async with Environment() as env, httpx2.AsyncClient(base_url=env.url) as http:
        client = lightkube_client(env)
        await client.create(pod("idle"))
        r = await http.get("/api/v1/namespaces/default/pods/idle/log")
        assert r.status_code == 400 and "waiting to start" in r.json()["message"]
        await client.close()
