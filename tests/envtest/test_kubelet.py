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
        conditions = (await client.get(Node, "envtest-node")).status.conditions
        # a kubelet's order: the pressure conditions, then Ready
        assert [(c.type, c.status) for c in conditions] == [
            ("MemoryPressure", "False"),
            ("DiskPressure", "False"),
            ("PIDPressure", "False"),
            ("Ready", "True"),
        ]
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


async def test_a_shell_image_without_a_command_crash_loops_as_on_a_cluster() -> None:
    """busybox's own command is `sh`: with no terminal it exits at once, so under restartPolicy Always
    the container restarts in back-off, worded as the kubelet words it."""
    assert default_rule({"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}).exit_code == 0
    tty = {"spec": {"containers": [{"name": "c", "image": "busybox", "stdin": True, "tty": True}]}}
    assert default_rule(tty).exit_code is None  # kubectl run -it: the shell waits on its terminal
    assert default_rule({"spec": {"containers": [{"name": "c", "image": "nginx"}]}}).exit_code is None
    async with Environment(kubelet=KubeletSimulator(pending_seconds=0.01, run_seconds=0.01)) as env:
        client = lightkube_client(env)
        await client.create(
            Pod(
                metadata=ObjectMeta(name="bb"),
                spec=PodSpec(containers=[Container(name="main", image="busybox")]),
            )
        )

        async def backing_off() -> Pod:
            p = await client.get(Pod, "bb")
            state = p.status.containerStatuses[0].state
            assert state.waiting is not None and state.waiting.reason == "CrashLoopBackOff", state
            return p

        p = await eventually(backing_off)
        assert p.status.phase == "Running"
        status = p.status.containerStatuses[0]
        assert status.lastState.terminated.reason == "Completed" and status.lastState.terminated.exitCode == 0
        assert status.state.waiting.message.startswith("back-off ")
        assert status.state.waiting.message.endswith(
            f"restarting failed container=main pod=bb_default({p.metadata.uid})"
        )
        ready = next(c for c in p.status.conditions if c.type == "Ready")
        assert (ready.reason, ready.message) == (
            "ContainersNotReady",
            "containers with unready status: [main]",
        )


async def test_init_containers_run_first_one_after_the_other() -> None:
    """Init containers run in order before the containers (Pending, Initialized=False), each reported
    in initContainerStatuses; a sidecar (restartPolicy Always) starts and runs on beside them; a
    failing one fails a restartPolicy Never Pod (found by the workload corpus against a cluster)."""

    def with_inits(name: str, *inits: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": "Never",
                "initContainers": list(inits),
                "containers": [{"name": "main", "image": "nginx"}],
            },
        }

    kubelet = KubeletSimulator(pending_seconds=0.01, run_seconds=0.05)
    async with Environment(kubelet=kubelet) as env:
        client = lightkube_client(env)
        first = {"name": "first", "image": "busybox", "command": ["sh", "-c", "echo one"]}
        side = {"name": "side", "image": "envoy", "restartPolicy": "Always"}
        second = {"name": "second", "image": "busybox", "command": ["sh", "-c", "exit 0"]}
        await client.create(Pod.from_dict(with_inits("ok", first, side, second)))

        async def running() -> Pod:
            p = await client.get(Pod, "ok")
            assert p.status.phase == "Running", p.status
            return p

        p = await eventually(running)
        inits = {s.name: s for s in p.status.initContainerStatuses}
        for done in ("first", "second"):
            term = inits[done].state.terminated
            assert (term.exitCode, term.reason, inits[done].ready) == (0, "Completed", True)
        assert inits["side"].state.running and inits["side"].ready and inits["side"].started
        assert {c.type: c.status for c in p.status.conditions}["Initialized"] == "True"

        bad = {"name": "migrate", "image": "busybox", "command": ["sh", "-c", "exit 3"]}
        await client.create(Pod.from_dict(with_inits("bad", bad)))

        async def failed() -> Pod:
            p = await client.get(Pod, "bad")
            assert p.status.phase == "Failed", p.status
            return p

        p = await eventually(failed)
        [st] = p.status.initContainerStatuses
        assert (st.state.terminated.exitCode, st.state.terminated.reason) == (3, "Error")
        initialized = next(c for c in p.status.conditions if c.type == "Initialized")
        assert (initialized.status, initialized.message) == (
            "False",
            "containers with incomplete status: [migrate]",
        )
        assert p.status.containerStatuses[0].state.waiting.reason == "PodInitializing"
