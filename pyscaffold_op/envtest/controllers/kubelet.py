"""A kubelet stand-in: one fake node whose Pods (bound by the simulated scheduler beside it) move
Pending → Running → Succeeded/Failed (or restart) on a schedule or by a rule, writing pods/status and
recording the kubelet's Events (Pulling/Pulled, Created, Started, BackOff, Killing) like the kubelet."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyscaffold_op.clock import REAL_CLOCK
from pyscaffold_op.envtest.controllers import containerenv, shell
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING, EventRecorder
from pyscaffold_op.envtest.controllers.scheduler import Scheduler
from pyscaffold_op.envtest.kubeversion import KUBERNETES_VERSION
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event, Store

log = logging.getLogger("pyscaffold_op.envtest.controllers.kubelet")
FAKE_NODE = "kwok.x-k8s.io/node"  # kwok's annotation of the nodes it plays
_SHELLS = {"sh", "bash", "ash", "dash", "zsh", "ksh"}


@dataclass
class PodOutcome:
    """How a simulated pod ends: its containers' exit code, optionally after `run_seconds`; an
    `exit_code` of None is a long-running container, which runs until the Pod is deleted."""

    exit_code: int | None
    run_seconds: float | None = None
    message: str = ""
    logs: str | None = None  # what `kubectl logs` shows; None: the `echo` output of the command


# A container whose script runs this long (the default terminationGracePeriodSeconds) is taken for a
# long-running one: it stays Running until the Pod is deleted instead of completing.
LONG_SLEEP_SECONDS = 30
# commands run as the tiny sh's builtins when they are the container's own command
_SIMPLE = {
    "echo",
    "true",
    "false",
    "sleep",
    "printf",
    "exit",
    "date",
    "env",
    "printenv",
    "seq",
    "tail",
    "hostname",
}


# images whose own command is a shell (or a REPL): without a terminal on stdin it exits at once, so a
# Deployment of plain `busybox` crash-loops on a cluster
_SHELL_IMAGES = {
    "busybox",
    "alpine",
    "ubuntu",
    "debian",
    "centos",
    "fedora",
    "rockylinux",
    "almalinux",
    "amazonlinux",
    "archlinux",
    "bash",
    "python",
    "node",
    "ruby",
}


def _image_runs_a_shell(container: dict[str, Any]) -> bool:
    if container.get("stdin") or container.get("tty"):
        return False  # `kubectl run -it`: the shell waits on its terminal
    name = str(container.get("image") or "").rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    return name in _SHELL_IMAGES


def _first_container(pod: dict[str, Any]) -> dict[str, Any]:
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return containers[0] if isinstance(containers[0], dict) else {}


def simulate(
    pod: dict[str, Any], env: dict[str, str], horizon: float = LONG_SLEEP_SECONDS
) -> shell.Run | None:
    """What the first container's command does up to `horizon` virtual seconds (shell.py's tiny sh for
    `sh -c` scripts and simple commands), None for the image's own process or a command not simulated."""
    argv = containerenv.command_line(pod, _first_container(pod), env)
    if not argv:
        return None
    base = os.path.basename(argv[0])
    if base in _SHELLS and "-c" in argv:
        i = argv.index("-c")
        script = argv[i + 1] if i + 1 < len(argv) else ""
        return shell.run_until(script, env, horizon, argv[i + 2 :] or [argv[0]])
    if base in _SHELLS and len(argv) == 1:
        return shell.Run([], 0, 0.0)  # a shell without a script or a terminal exits at once
    if base in _SIMPLE:
        return shell.run_until(shlex.join(argv), env, horizon)
    return None


def echo_output(pod: dict[str, Any]) -> str:
    """What the first container prints (up to LONG_SLEEP_SECONDS of its virtual time): the stand-in for
    its logs, with its environment (ConfigMap and Secret references left out)."""
    env = containerenv.container_env(pod, _first_container(pod))
    run = simulate(pod, env)
    return "".join(text for _at, text in run.output) if run is not None else ""


def default_rule(pod: dict[str, Any]) -> PodOutcome:
    """How the first container ends, from running its command in a tiny sh (shell.py): the script's
    exit code; 0 at once for an image whose own command is a shell (busybox, alpine, ubuntu ...)
    without a terminal; never (`PodOutcome(None)`, Running until deleted) for a container without a
    command (the image's server), one still running after LONG_SLEEP_SECONDS of its virtual time (`sleep 300`,
    `sleep infinity`, `tail -f`, `while true` loops) and, in Pods that restart Always, a command that is
    neither a shell nor a simple utility (a server such as `/manager --leader-elect`)."""
    spec = pod.get("spec") or {}
    always = spec.get("restartPolicy", "Always") == "Always"
    c = _first_container(pod)
    if not (c.get("command") or c.get("args")):
        return PodOutcome(0) if _image_runs_a_shell(c) else PodOutcome(None)
    run = simulate(pod, containerenv.container_env(pod, c))
    if run is None:
        return PodOutcome(None) if always else PodOutcome(0)
    if run.exit_code is None or run.seconds >= LONG_SLEEP_SECONDS:
        return PodOutcome(None)
    return PodOutcome(run.exit_code)


def _init_exit_code(pod: dict[str, Any], container: dict[str, Any]) -> int | None:
    """How an init container ends: its script's exit code in the tiny sh; 0 for a command not
    simulated or the image's own (an init container does its job and exits); None for one still
    running after LONG_SLEEP_SECONDS of its virtual time."""
    alone = {**pod, "spec": {**(pod.get("spec") or {}), "containers": [container]}}
    if not (container.get("command") or container.get("args")):
        return 0
    run = simulate(alone, containerenv.container_env(alone, container))
    if run is None:
        return 0
    if run.exit_code is None or run.seconds >= LONG_SLEEP_SECONDS:
        return None
    return run.exit_code


def _command_events(
    pod: dict[str, Any], env: dict[str, str]
) -> Iterator[tuple[float, str | int | None]] | None:
    """shell.run over the first container's command, as `simulate` chooses it (None: not simulated)."""
    argv = containerenv.command_line(pod, _first_container(pod), env)
    if not argv:
        return None
    base = os.path.basename(argv[0])
    if base in _SHELLS and "-c" in argv:
        i = argv.index("-c")
        return shell.run(argv[i + 1] if i + 1 < len(argv) else "", env, argv[i + 2 :] or [argv[0]])
    if base in _SIMPLE:
        return shell.run(shlex.join(argv), env)
    return None


class _TimedLogs:
    """A long-running container's output as it happens: what its script has printed by now (its
    virtual time taken as real time since the container started)."""

    MAX_BYTES = 1 << 20

    def __init__(self, events: Iterator[tuple[float, str | int | None]], started: float) -> None:
        self._events = events
        self._started = started
        self._text: list[str] = []
        self._size = 0
        self._next: tuple[float, str | int | None] | None = None
        self._done = False

    def text(self, now: float) -> str:
        elapsed = now - self._started
        while not self._done and self._size < self.MAX_BYTES:
            if self._next is None:
                self._next = next(self._events, None)
                if self._next is None:
                    self._done = True
                    break
            at, item = self._next
            if at > elapsed:
                break
            self._next = None
            if isinstance(item, str):
                self._text.append(item)
                self._size += len(item)
            else:
                self._done = True
        return "".join(self._text)


class KubeletSimulator:
    def __init__(
        self,
        rule: Callable[[dict[str, Any]], PodOutcome] | None = None,
        *,
        pending_seconds: float = 0.05,
        run_seconds: float = 0.1,
        node_name: str = "envtest-node",
        restart_backoff: float = 0.2,
        stop_seconds: float = 0.05,
        scheduler: bool = True,
        events: bool = True,
        fake_nodes: bool = True,
    ) -> None:
        """`scheduler=False`: no simulated kube-scheduler binds Pods (bind them yourself, through
        pods/binding or spec.nodeName); `events=False`: record no Events; `fake_nodes=False`: leave
        the Nodes annotated `kwok.x-k8s.io/node: fake` alone (by default this kubelet runs them too,
        as kwok does)."""
        self.rule = rule or default_rule
        # how long containers take to stop after a graceful delete (at most the grace period)
        self.stop_seconds = stop_seconds
        self.pending_seconds = pending_seconds
        self.run_seconds = run_seconds
        self.node_name = node_name
        self.restart_backoff = restart_backoff
        self._store: Store | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._logs: dict[str, str] = {}  # pod uid -> log text of its runs
        self._timed: dict[str, _TimedLogs] = {}  # pod uid -> a long-running container's output
        self._stopping: dict[str, asyncio.Task[None]] = {}  # pod uid -> graceful termination
        self.scheduler: Scheduler | None = Scheduler() if scheduler else None
        self.events = events
        self.fake_nodes = fake_nodes
        self._nodes: dict[str, str] = {node_name: "10.0.0.1"}  # the nodes run here -> InternalIP
        self._recorders: dict[str, EventRecorder] = {}
        self._images: dict[str, set[str]] = {}  # node -> the images it has pulled

    # -- lifecycle -----------------------------------------------------------------------------------

    def attach(self, store: Store) -> None:
        """Register the node and start following pods (call on the server's loop)."""
        self._store = store
        store.pod_logs = self.logs
        nodes = store.info("", "v1", "nodes")
        if store.find(("", "nodes"), "", self.node_name) is None:
            store.create(
                nodes,
                "",
                {"metadata": {"name": self.node_name, "labels": node_labels(self.node_name)}, "spec": {}},
                manager="kubelet",
            )
            self._post_status(self.node_name)
        if self.fake_nodes:
            for node in store.list(nodes, None)[0]:
                self._adopt_fake_node(node)
        store.on_change.append(self._on_event)
        if self.scheduler is not None:
            self.scheduler.attach(store, REAL_CLOCK, events=self.events)
        pods, _rv, _c, _r = store.list(store.info("", "v1", "pods"), None)
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                self._maybe_stop(pod)
            else:
                self._maybe_start(pod)

    # -- nodes ---------------------------------------------------------------------------------------

    def _recorder(self, node: str) -> EventRecorder:
        """The Event recorder of the kubelet of `node` (source host: the node)."""
        recorder = self._recorders.get(node)
        if recorder is None:
            recorder = self._recorders[node] = EventRecorder("kubelet", node, manager="kubelet")
            if self.events and self._store is not None:
                recorder.attach(self._store)
        return recorder

    def _adopt_fake_node(self, node: dict[str, Any]) -> None:
        """A Node annotated `kwok.x-k8s.io/node: fake` is run here too, as kwok runs it: it reports
        Ready with its own InternalIP, and its Pods live as this node's do."""
        name = node["metadata"]["name"]
        if name == self.node_name or (node["metadata"].get("annotations") or {}).get(FAKE_NODE) != "fake":
            return
        if name not in self._nodes:
            self._nodes[name] = f"10.0.{len(self._nodes) // 250}.{len(self._nodes) % 250 + 1}"
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (node.get("status") or {}).get("conditions") or []
        )
        if not ready:
            self._post_status(name)

    def _post_status(self, name: str) -> None:
        """The node status a kubelet posts: Ready, addresses, capacity, nodeInfo."""
        assert self._store is not None
        store = self._store
        nodes = store.info("", "v1", "nodes")
        node = store.find(("", "nodes"), "", name)
        if node is None:
            return
        ts = now_rfc3339()
        own = node.get("status") or {}
        fake = name != self.node_name
        # a kwok node keeps the addresses and resources it was created with, else kwok's defaults
        # (node-initialize: 1k CPUs, 1Ti, 1M Pods); this kubelet's own node is a modest machine
        resources = (
            {"cpu": "1k", "memory": "1Ti", "pods": "1M"}
            if fake
            else {
                "cpu": "8",
                "ephemeral-storage": "100Gi",
                "memory": "32Gi",
                "pods": "110",
            }
        )
        pressure = [
            ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ]
        status = {
            "conditions": [
                *(
                    {
                        "type": typ,
                        "status": "False",
                        "reason": reason,
                        "message": message,
                        "lastHeartbeatTime": ts,
                        "lastTransitionTime": ts,
                    }
                    for typ, reason, message in pressure
                ),
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": ts,
                    "lastTransitionTime": ts,
                },
            ],
            "addresses": (own.get("addresses") if fake else None)
            or [
                {"type": "InternalIP", "address": self._nodes.get(name, "10.0.0.1")},
                {"type": "Hostname", "address": name},
            ],
            "capacity": (own.get("capacity") if fake else None) or resources,
            "allocatable": (own.get("allocatable") if fake else None) or resources,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": "envtest",
                "containerRuntimeVersion": "containerd://1.7.0",
                "kernelVersion": "6.0.0",
                "kubeProxyVersion": KUBERNETES_VERSION,
                "kubeletVersion": KUBERNETES_VERSION,
                "machineID": "envtest",
                "operatingSystem": "linux",
                "osImage": "pyop envtest",
                "systemUUID": "00000000-0000-0000-0000-000000000000",
            },
        }
        try:
            store.update(nodes, "", name, {**node, "status": status}, subresource="status", manager="kubelet")
        except StatusError as err:
            log.debug("kubelet: node %s status: %s", name, err.message)

    def logs(self, pod: dict[str, Any]) -> str | None:
        """The pod's logs so far; None when its containers have not started."""
        uid = pod["metadata"]["uid"]
        done = self._logs.get(uid)
        timed = self._timed.get(uid)
        if timed is None:
            return done
        return (done or "") + timed.text(time.monotonic())

    def _record_logs(self, pod: dict[str, Any], outcome: PodOutcome) -> None:
        """A container run's logs: the outcome's own; else what its command prints, at once for one
        that ends (its run is compressed to run_seconds), as its script's clock goes for one that
        runs on (a `while true; do echo ...; sleep 5; done` prints every 5 s)."""
        uid = pod["metadata"]["uid"]
        self._timed.pop(uid, None)
        before = self._logs.get(uid, "")
        if outcome.logs is not None:
            self._logs[uid] = before + outcome.logs
            return
        store = self._store

        def lookup(kind: str, ns: str, name: str) -> dict[str, Any] | None:
            return store.find(("", kind), ns, name) if store is not None else None

        env = containerenv.container_env(pod, _first_container(pod), lookup)
        if outcome.exit_code is not None:
            run = simulate(pod, env)
            self._logs[uid] = before + ("".join(t for _at, t in run.output) if run is not None else "")
            return
        self._logs[uid] = before
        events = _command_events(pod, env)
        if events is not None:
            self._timed[uid] = _TimedLogs(events, time.monotonic())

    async def detach(self) -> None:
        if self.scheduler is not None:
            self.scheduler.detach()
        for recorder in self._recorders.values():
            recorder.detach()
        if self._store is not None and self._on_event in self._store.on_change:
            self._store.on_change.remove(self._on_event)
        tasks = list(self._tasks.values()) + list(self._stopping.values())
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._tasks.clear()
        self._stopping.clear()

    def _on_event(self, event: Event) -> None:
        if event.gr == ("", "nodes"):
            if event.type == "DELETED":
                if event.obj["metadata"]["name"] != self.node_name:
                    self._nodes.pop(event.obj["metadata"]["name"], None)
            elif self.fake_nodes:  # not while the store is telling: its status is written next
                asyncio.get_running_loop().call_soon(self._adopt_fake_node, event.obj)
            return
        if event.gr != ("", "pods"):
            return
        if event.type == "DELETED":
            self._logs.pop(event.obj["metadata"]["uid"], None)
            self._timed.pop(event.obj["metadata"]["uid"], None)
        elif event.obj["metadata"].get("deletionTimestamp"):
            self._maybe_stop(event.obj)
        else:
            self._maybe_start(event.obj)

    def _maybe_stop(self, pod: dict[str, Any]) -> None:
        """A Pod on this node is being deleted gracefully: stop its containers, then remove it."""
        meta = pod["metadata"]
        uid = meta["uid"]
        if uid in self._stopping or (pod.get("spec") or {}).get("nodeName") not in self._nodes:
            return
        running = self._tasks.pop(uid, None)
        if running is not None:
            running.cancel()
        task = asyncio.get_running_loop().create_task(
            self._stop(meta.get("namespace", ""), meta["name"], uid)
        )
        self._stopping[uid] = task

    async def _stop(self, ns: str, name: str, uid: str) -> None:
        assert self._store is not None
        store = self._store
        info = store.info("", "v1", "pods")
        try:
            pod = store.find(("", "pods"), ns, name)
            if pod is None or pod["metadata"]["uid"] != uid:
                return
            grace = pod["metadata"].get("deletionGracePeriodSeconds") or 0
            running = {
                cs.get("name")
                for cs in (pod.get("status") or {}).get("containerStatuses") or []
                if "running" in (cs.get("state") or {})
            }
            for c in (pod.get("spec") or {}).get("containers") or []:
                if isinstance(c, dict) and c.get("name") in running:
                    self._event(pod, c, NORMAL, "Killing", f"Stopping container {c.get('name', '')}")
            await asyncio.sleep(min(self.stop_seconds, grace))
            pod = store.find(("", "pods"), ns, name)
            if pod is None or pod["metadata"]["uid"] != uid:
                return
            status = pod.get("status") or {}
            if status.get("phase") not in ("Succeeded", "Failed"):
                store.update(
                    info,
                    ns,
                    name,
                    {**pod, "status": stopped_status(pod)},
                    subresource="status",
                    manager="kubelet",
                )
            store.delete(info, ns, name, grace_period=0, preconditions={"uid": uid})
        except StatusError as err:
            log.debug("kubelet: stopping pod %s/%s: %s", ns, name, err.message)
        finally:
            self._stopping.pop(uid, None)

    def _maybe_start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        phase = (pod.get("status") or {}).get("phase")
        if uid in self._tasks or phase in ("Succeeded", "Failed") or meta.get("deletionTimestamp"):
            return
        if (pod.get("spec") or {}).get("nodeName") not in self._nodes:
            return  # not (yet) bound here: the scheduler binds, the node's kubelet runs
        task = asyncio.get_running_loop().create_task(self._run(meta.get("namespace", ""), meta["name"], uid))
        self._tasks[uid] = task

    # -- the pod's life ------------------------------------------------------------------------------

    def _pod(self, ns: str, name: str, uid: str) -> dict[str, Any] | None:
        assert self._store is not None
        pod = self._store.find(("", "pods"), ns, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["metadata"].get("deletionTimestamp"):
            return None
        return pod

    def _write_status(self, ns: str, name: str, uid: str, status: dict[str, Any]) -> bool:
        assert self._store is not None
        pod = self._pod(ns, name, uid)
        if pod is None:
            return False
        info = self._store.info("", "v1", "pods")
        self._store.update(info, ns, name, {**pod, "status": status}, subresource="status", manager="kubelet")
        return True

    async def _run(self, ns: str, name: str, uid: str) -> None:
        try:
            await self._lifecycle(ns, name, uid)
        except StatusError as err:  # deleted or replaced meanwhile
            log.debug("kubelet: pod %s/%s: %s", ns, name, err.message)
        finally:
            self._tasks.pop(uid, None)

    async def _lifecycle(self, ns: str, name: str, uid: str) -> None:
        assert self._store is not None
        await asyncio.sleep(0)
        pod = self._pod(ns, name, uid)
        if pod is None:
            return
        started = now_rfc3339()
        scheduled = _scheduled_since(pod) or started
        base = {
            "hostIP": self._nodes.get(pod["spec"]["nodeName"], "10.0.0.1"),
            "hostIPs": [{"ip": self._nodes.get(pod["spec"]["nodeName"], "10.0.0.1")}],
            # the API server computed it at create (immutable); the kubelet reports the same class
            "qosClass": (pod.get("status") or {}).get("qosClass") or "BestEffort",
            "startTime": started,
        }
        containers = [c.get("name", "") for c in pod["spec"].get("containers") or [] if isinstance(c, dict)]
        inits = [c for c in pod["spec"].get("initContainers") or [] if isinstance(c, dict)]
        images = {
            c.get("name", ""): c.get("image", "")
            for c in pod["spec"].get("containers") or []
            if isinstance(c, dict)
        }
        self._write_status(
            ns,
            name,
            uid,
            {
                **base,
                "phase": "Pending",
                "conditions": [_cond("PodScheduled", "True", scheduled)],
                **(
                    {
                        "initContainerStatuses": [
                            _cstatus(
                                c.get("name", ""),
                                c.get("image", ""),
                                False,
                                0,
                                {"waiting": {"reason": "PodInitializing"}},
                            )
                            for c in inits
                        ]
                    }
                    if inits
                    else {}
                ),
                "containerStatuses": [
                    _cstatus(
                        c,
                        images[c],
                        False,
                        0,
                        {"waiting": {"reason": "PodInitializing" if inits else "ContainerCreating"}},
                    )
                    for c in containers
                ],
            },
        )
        await asyncio.sleep(self.pending_seconds)
        ip = f"{self._pod_range(pod['spec']['nodeName'])}.{(hash(uid) % 250) + 2}"
        if inits:
            init_statuses = await self._initialize(
                ns, name, uid, base, ip, started, scheduled, containers, images
            )
            if init_statuses is None:
                return
            base["initContainerStatuses"] = init_statuses
        restarts = 0
        last_state: dict[str, Any] = {}
        policy = pod["spec"].get("restartPolicy", "Always")
        while True:
            pod = self._pod(ns, name, uid)
            if pod is None:
                return
            self._start_containers(pod, restarts > 0)
            run_start = now_rfc3339()
            running = {
                **base,
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "conditions": _conds("True", started, run_start, scheduled=scheduled),
                "containerStatuses": [
                    _cstatus(c, images[c], True, restarts, {"running": {"startedAt": run_start}}, last_state)
                    for c in containers
                ],
            }
            if not self._write_status(ns, name, uid, running):
                return
            outcome = self.rule(pod)
            self._record_logs(pod, outcome)
            if outcome.exit_code is None:  # long-running: Running and Ready until the Pod is deleted
                await asyncio.Event().wait()
            await asyncio.sleep(self.run_seconds if outcome.run_seconds is None else outcome.run_seconds)
            finished = now_rfc3339()
            code = outcome.exit_code or 0
            terminated = {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error",
                "startedAt": run_start,
                "finishedAt": finished,
                "containerID": f"containerd://{uid.replace('-', '')}{restarts}",
            }
            if outcome.message:
                terminated["message"] = outcome.message
            done = (code == 0 and policy != "Always") or (code != 0 and policy == "Never")
            if done:
                phase = "Succeeded" if code == 0 else "Failed"
                self._write_status(
                    ns,
                    name,
                    uid,
                    {
                        **base,
                        "phase": phase,
                        "podIP": ip,
                        "podIPs": [{"ip": ip}],
                        "conditions": _conds(
                            "False", started, finished, reason="PodCompleted", scheduled=scheduled
                        ),
                        "containerStatuses": [
                            _cstatus(c, images[c], False, restarts, {"terminated": terminated}, last_state)
                            for c in containers
                        ],
                    },
                )
                return
            # Restart (OnFailure after a failure, Always after any exit): CrashLoopBackOff while waiting.
            restarts += 1
            last_state = {"terminated": terminated}
            delay = min(self.restart_backoff * 2 ** (restarts - 1), 2.0)
            self._write_status(
                ns,
                name,
                uid,
                {
                    **base,
                    "phase": "Running",
                    "podIP": ip,
                    "podIPs": [{"ip": ip}],
                    "conditions": _conds(
                        "False",
                        started,
                        finished,
                        reason="ContainersNotReady",
                        scheduled=scheduled,
                        message=f"containers with unready status: [{' '.join(containers)}]",
                    ),
                    "containerStatuses": [
                        _cstatus(
                            c,
                            images[c],
                            False,
                            restarts,
                            {
                                "waiting": {  # in back-off after any exit, as the kubelet says it
                                    "reason": "CrashLoopBackOff",
                                    "message": f"back-off {go_duration(delay)} restarting failed "
                                    f"container={c} pod={_pod_desc(pod)}",
                                }
                            },
                            last_state,
                        )
                        for c in containers
                    ],
                },
            )
            for c in pod["spec"].get("containers") or []:
                if isinstance(c, dict):
                    self._event(
                        pod,
                        c,
                        WARNING,
                        "BackOff",
                        f"Back-off restarting failed container {c.get('name', '')} in pod {_pod_desc(pod)}",
                    )
            await asyncio.sleep(delay)

    def _pod_range(self, node_name: str) -> str:
        """The first three octets of the node's Pod range (`spec.podCIDR`, the node IPAM
        controller's /24), 10.244.0 without one."""
        assert self._store is not None
        node = self._store.find(("", "nodes"), "", node_name) or {}
        cidr = str((node.get("spec") or {}).get("podCIDR") or "")
        parts = cidr.split("/", 1)[0].split(".")
        return ".".join(parts[:3]) if len(parts) == 4 and cidr.endswith("/24") else "10.244.0"

    async def _initialize(
        self,
        ns: str,
        name: str,
        uid: str,
        base: dict[str, Any],
        ip: str,
        started: str,
        scheduled: str,
        containers: list[str],
        images: dict[str, str],
    ) -> list[dict[str, Any]] | None:
        """The init containers, one after the other (the Pod Pending, Initialized=False): each runs its
        command in the tiny sh and must exit 0 (a command not simulated or an image's own does); one
        that fails fails the Pod under restartPolicy Never, else restarts after a back-off
        (Init:CrashLoopBackOff). A sidecar (restartPolicy Always) starts, is ready and runs on.
        Returns the init container statuses once all are done, None when the Pod is gone or failed."""
        pod = self._pod(ns, name, uid)
        if pod is None:
            return None
        inits = [c for c in pod["spec"].get("initContainers") or [] if isinstance(c, dict)]
        policy = pod["spec"].get("restartPolicy", "Always")
        statuses = [
            _cstatus(
                c.get("name", ""), c.get("image", ""), False, 0, {"waiting": {"reason": "PodInitializing"}}
            )
            for c in inits
        ]
        waiting = [
            _cstatus(c, images[c], False, 0, {"waiting": {"reason": "PodInitializing"}}) for c in containers
        ]
        unready = f"containers with unready status: [{' '.join(containers)}]"

        def pending(phase: str = "Pending") -> dict[str, Any]:
            incomplete = [
                st["name"]
                for c, st in zip(inits, statuses, strict=True)
                if not (
                    (st["state"].get("terminated") or {}).get("exitCode") == 0 and "terminated" in st["state"]
                )
                and not (c.get("restartPolicy") == "Always" and st["started"])
            ]
            ts = now_rfc3339()
            return {
                **base,
                "phase": phase,
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "conditions": [
                    _cond("PodReadyToStartContainers", "True", started),
                    _cond(
                        "Initialized",
                        "False",
                        started,
                        "ContainersNotInitialized",
                        f"containers with incomplete status: [{' '.join(incomplete)}]",
                    ),
                    _cond(
                        "Ready",
                        "False",
                        started,
                        "PodCompleted" if phase == "Failed" else "ContainersNotReady",
                        unready,
                    ),
                    _cond(
                        "ContainersReady",
                        "False",
                        started,
                        "PodCompleted" if phase == "Failed" else "ContainersNotReady",
                        unready,
                    ),
                    _cond("PodScheduled", "True", scheduled or ts),
                ],
                "initContainerStatuses": [dict(st) for st in statuses],
                "containerStatuses": waiting,
            }

        for i, c in enumerate(inits):
            restarts = 0
            last_state: dict[str, Any] = {}
            while True:
                pod = self._pod(ns, name, uid)
                if pod is None:
                    return None
                self._start_containers(pod, restarts > 0, [c], "initContainers")
                run_start = now_rfc3339()
                sidecar = c.get("restartPolicy") == "Always"
                statuses[i] = {
                    **_cstatus(
                        c.get("name", ""),
                        c.get("image", ""),
                        sidecar,
                        restarts,
                        {"running": {"startedAt": run_start}},
                        last_state,
                    ),
                    "containerID": f"containerd://{uid.replace('-', '')}i{i}{restarts}",
                }
                if not self._write_status(ns, name, uid, pending()):
                    return None
                if sidecar:
                    break  # started: the next init container runs beside it
                code = _init_exit_code(pod, c)
                if code is None:  # runs forever: the Pod never initializes
                    await asyncio.Event().wait()
                await asyncio.sleep(self.run_seconds)
                terminated = {
                    "exitCode": code,
                    "reason": "Completed" if code == 0 else "Error",
                    "startedAt": run_start,
                    "finishedAt": now_rfc3339(),
                    "containerID": statuses[i]["containerID"],
                }
                if code == 0:
                    statuses[i] = {
                        **statuses[i],
                        "ready": True,
                        "started": False,
                        "state": {"terminated": terminated},
                    }
                    break
                if policy == "Never":
                    statuses[i] = {**statuses[i], "started": False, "state": {"terminated": terminated}}
                    self._write_status(ns, name, uid, pending("Failed"))
                    return None
                restarts += 1
                last_state = {"terminated": terminated}
                delay = min(self.restart_backoff * 2 ** (restarts - 1), 2.0)
                statuses[i] = {
                    **statuses[i],
                    "started": False,
                    "restartCount": restarts,
                    "lastState": last_state,
                    "state": {
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": f"back-off {go_duration(delay)} restarting failed "
                            f"container={c.get('name', '')} pod={_pod_desc(pod)}",
                        }
                    },
                }
                if not self._write_status(ns, name, uid, pending()):
                    return None
                self._event(
                    pod,
                    c,
                    WARNING,
                    "BackOff",
                    f"Back-off restarting failed container {c.get('name', '')} in pod {_pod_desc(pod)}",
                    "initContainers",
                )
                await asyncio.sleep(delay)
        return statuses

    # -- the kubelet's Events ------------------------------------------------------------------------

    def _event(
        self,
        pod: dict[str, Any],
        container: dict[str, Any],
        type_: str,
        reason: str,
        msg: str,
        field: str = "containers",
    ) -> None:
        """An Event about one container (GenerateContainerRef: the Pod, fieldPath spec.containers{name}
        or spec.initContainers{name})."""
        if self.events:
            path = f"spec.{field}{{{container.get('name', '')}}}"
            self._recorder((pod.get("spec") or {}).get("nodeName") or self.node_name).event(
                pod, type_, reason, msg, field_path=path
            )

    def _start_containers(
        self,
        pod: dict[str, Any],
        again: bool,
        only: list[dict[str, Any]] | None = None,
        field: str = "containers",
    ) -> None:
        """What the kubelet records as it starts each container (`only` those): the image (pulled, or
        already there under IfNotPresent/Never), Created, Started."""
        for c in pod["spec"].get("containers") or [] if only is None else only:
            if not isinstance(c, dict):
                continue
            image = str(c.get("image", ""))
            policy = c.get("imagePullPolicy") or "IfNotPresent"
            pulled = self._images.setdefault(pod["spec"].get("nodeName") or self.node_name, set())
            if policy == "Always" or (image not in pulled and policy != "Never"):
                self._event(pod, c, NORMAL, "Pulling", f'Pulling image "{image}"', field)
                took = go_duration(self.pending_seconds)
                self._event(
                    pod,
                    c,
                    NORMAL,
                    "Pulled",
                    f'Successfully pulled image "{image}" in {took} ({took} including waiting). '
                    f"Image size: {image_size(image)} bytes.",
                    field,
                )
                pulled.add(image)
            else:
                msg = f'Container image "{image}" already present on machine and can be accessed by the pod'
                self._event(pod, c, NORMAL, "Pulled", msg, field)
            self._event(pod, c, NORMAL, "Created", "Container created", field)
            self._event(pod, c, NORMAL, "Started", "Container started", field)


def node_labels(name: str) -> dict[str, str]:
    """The labels a kubelet on linux/amd64 registers its Node with."""
    return {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }


def required_node(pod: dict[str, Any]) -> str | None:
    """The node a Pod's required node affinity pins it to (`metadata.name In [node]`, as DaemonSet
    Pods have), if any: the stand-in scheduler binds such a Pod only there."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in (term or {}).get("matchFields") or []:
            values = req.get("values") or []
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def stopped_status(pod: dict[str, Any]) -> dict[str, Any]:
    """The status a kubelet writes once it has stopped a deleted Pod's containers (SIGTERM, exit 143):
    not Ready, containers terminated, a terminal phase (kubelets since 1.27 set one before deletion)."""
    status = dict(pod.get("status") or {})
    ts = now_rfc3339()
    statuses = []
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        started = (state.get("running") or {}).get("startedAt") or ts
        term = state.get("terminated") or {
            "exitCode": 143,
            "reason": "Error",
            "startedAt": started,
            "finishedAt": ts,
            "containerID": cs.get("containerID", ""),
        }
        statuses.append({**cs, "ready": False, "started": False, "state": {"terminated": term}})
    failed = any(s["state"]["terminated"].get("exitCode") for s in statuses)
    started_at = status.get("startTime", ts)
    inits = []
    for cs in status.get("initContainerStatuses") or []:
        running = (cs.get("state") or {}).get("running")
        if running is not None:  # a sidecar stops with the Pod
            term = {
                "exitCode": 143,
                "reason": "Error",
                "startedAt": running.get("startedAt") or ts,
                "finishedAt": ts,
                "containerID": cs.get("containerID", ""),
            }
            cs = {**cs, "ready": False, "started": False, "state": {"terminated": term}}
        inits.append(cs)
    if inits:
        status["initContainerStatuses"] = inits
    return {
        **status,
        "phase": "Failed" if failed else "Succeeded",
        "conditions": _conds("False", started_at, ts, reason="PodCompleted"),
        "containerStatuses": statuses,
    }


def _cond(typ: str, status: str, ts: str, reason: str | None = None, message: str = "") -> dict[str, Any]:
    c: dict[str, Any] = {"type": typ, "status": status, "lastProbeTime": None, "lastTransitionTime": ts}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _conds(
    ready: str,
    started: str,
    ts: str,
    reason: str | None = None,
    *,
    scheduled: str | None = None,
    message: str = "",
) -> list[dict[str, Any]]:
    return [
        _cond("PodReadyToStartContainers", "True", started),
        _cond("Initialized", "True", started),
        _cond("Ready", ready, ts, reason, message),
        _cond("ContainersReady", ready, ts, reason, message),
        _cond("PodScheduled", "True", scheduled or started),
    ]


def _scheduled_since(pod: dict[str, Any]) -> str | None:
    """When the binding set PodScheduled (the kubelet keeps that condition as it found it)."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            return str(c.get("lastTransitionTime") or "") or None
    return None


def _pod_desc(pod: dict[str, Any]) -> str:
    """format.Pod: name_namespace(uid)."""
    meta = pod["metadata"]
    return f"{meta['name']}_{meta.get('namespace', '')}({meta['uid']})"


def go_duration(seconds: float) -> str:
    """A duration truncated to milliseconds as Go's time.Duration prints it (750ms, 1.5s, 2m3.25s)."""
    ms = int(seconds * 1000)
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest // 1000}.{rest % 1000:03d}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{hours}h{minutes}m{secs}"
    return f"{minutes}m{secs}" if minutes else secs


def image_size(image: str) -> int:
    """A made-up but stable image size (the emulator pulls nothing)."""
    return 10_000_000 + zlib.crc32(image.encode()) % 90_000_000


def _cstatus(
    name: str,
    image: str,
    ready: bool,
    restarts: int,
    state: dict[str, Any],
    last_state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "imageID": f"docker.io/library/{image}@sha256:0",
        "ready": ready,
        "started": "running" in state,
        "restartCount": restarts,
        "state": state,
        "lastState": last_state or {},
        "containerID": f"containerd://{name}",
    }
