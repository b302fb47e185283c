"""A kubelet stand-in: schedules Pods onto one fake node and moves them Pending → Running →
Succeeded/Failed (or restarts them) on a schedule or by a rule, writing pods/status like the kubelet."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.objectstore import now_rfc3339
from pyscaffold_op.envtest.status import StatusError

if TYPE_CHECKING:
    from pyscaffold_op.envtest.objectstore import Event, Store

log = logging.getLogger("pyscaffold_op.envtest.kubelet")
_SHELLS = {"sh", "bash", "ash", "dash", "zsh", "ksh"}


@dataclass
class PodOutcome:
    """How a simulated pod ends: its containers' exit code, optionally after `run_seconds`."""

    exit_code: int
    run_seconds: float | None = None
    message: str = ""
    logs: str | None = None  # what `kubectl logs` shows; None: the `echo` output of the command


def echo_output(pod: dict[str, Any]) -> str:
    """What the first container's shell `echo`s print: a stand-in for its logs."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    c = containers[0] if isinstance(containers[0], dict) else {}
    argv = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    if not argv:
        return ""
    if os.path.basename(argv[0]) in _SHELLS and "-c" in argv:
        script = " ".join(argv[argv.index("-c") + 1 :])
    else:
        script = shlex.join(argv)
    out = []
    for part in re.split(r"&&|\|\||;|\n", script):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if words and os.path.basename(words[0]) == "echo":
            args = words[1:]
            newline = "\n"
            while args and args[0] in ("-n", "-e", "-E"):
                if args.pop(0) == "-n":
                    newline = ""
            out.append(" ".join(args) + newline)
    return "".join(out)


def default_rule(pod: dict[str, Any]) -> PodOutcome:
    """Exit code N for `sh -c '... exit N'`, 1 for `false`, 0 otherwise (first container)."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    c = containers[0] if isinstance(containers[0], dict) else {}
    argv = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    if not argv:
        return PodOutcome(0)
    script = " ".join(argv)
    if os.path.basename(argv[0]) in _SHELLS and "-c" in argv:
        idx = argv.index("-c")
        script = " ".join(argv[idx + 1 :])
    elif os.path.basename(argv[0]) == "false":
        return PodOutcome(1)
    codes = re.findall(r"(?:^|[;&|\s])exit\s+(\d+)", script)
    if codes:
        return PodOutcome(int(codes[-1]) % 256)
    try:
        words = shlex.split(script)
    except ValueError:
        words = script.split()
    if words and words[0] == "false":
        return PodOutcome(1)
    return PodOutcome(0)


class KubeletSimulator:
    def __init__(
        self,
        rule: Callable[[dict[str, Any]], PodOutcome] | None = None,
        *,
        pending_seconds: float = 0.05,
        run_seconds: float = 0.1,
        node_name: str = "envtest-node",
        restart_backoff: float = 0.2,
    ) -> None:
        self.rule = rule or default_rule
        self.pending_seconds = pending_seconds
        self.run_seconds = run_seconds
        self.node_name = node_name
        self.restart_backoff = restart_backoff
        self._store: Store | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._logs: dict[str, str] = {}  # pod uid -> log text of its runs

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
                {"metadata": {"name": self.node_name, "labels": {"kubernetes.io/hostname": self.node_name}}},
            )
            node = store.get(nodes, "", self.node_name)
            ts = now_rfc3339()
            store.update(
                nodes,
                "",
                self.node_name,
                {
                    **node,
                    "status": {
                        "conditions": [
                            {
                                "type": "Ready",
                                "status": "True",
                                "reason": "KubeletReady",
                                "message": "kubelet is posting ready status",
                                "lastHeartbeatTime": ts,
                                "lastTransitionTime": ts,
                            }
                        ],
                        "addresses": [
                            {"type": "InternalIP", "address": "10.0.0.1"},
                            {"type": "Hostname", "address": self.node_name},
                        ],
                        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                        "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                        "nodeInfo": {
                            "architecture": "amd64",
                            "bootID": "envtest",
                            "containerRuntimeVersion": "containerd://1.7.0",
                            "kernelVersion": "6.0.0",
                            "kubeProxyVersion": "v1.32.0",
                            "kubeletVersion": "v1.32.0-pyop",
                            "machineID": "envtest",
                            "operatingSystem": "linux",
                            "osImage": "pyop envtest",
                            "systemUUID": "00000000-0000-0000-0000-000000000000",
                        },
                    },
                },
                subresource="status",
                manager="kubelet",
            )
        store.on_change.append(self._on_event)
        for pod in list(store._bucket(("", "pods")).objs.values()):
            self._maybe_start(pod)

    def logs(self, pod: dict[str, Any]) -> str | None:
        """The pod's logs so far; None when its containers have not started."""
        return self._logs.get(pod["metadata"]["uid"])

    async def detach(self) -> None:
        if self._store is not None and self._on_event in self._store.on_change:
            self._store.on_change.remove(self._on_event)
        tasks = list(self._tasks.values())
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._tasks.clear()

    def _on_event(self, event: Event) -> None:
        if event.gr == ("", "pods") and event.type != "DELETED":
            self._maybe_start(event.obj)

    def _maybe_start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        phase = (pod.get("status") or {}).get("phase")
        if uid in self._tasks or phase in ("Succeeded", "Failed") or meta.get("deletionTimestamp"):
            return
        node = (pod.get("spec") or {}).get("nodeName")
        if node and node != self.node_name:
            return
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
        if not (pod.get("spec") or {}).get("nodeName"):
            info = self._store.info("", "v1", "pods")
            spec = {**pod["spec"], "nodeName": self.node_name}
            self._store.update(info, ns, name, {**pod, "spec": spec}, manager="kube-scheduler")
            pod = self._pod(ns, name, uid)
            if pod is None:
                return
        started = now_rfc3339()
        base = {
            "hostIP": "10.0.0.1",
            "hostIPs": [{"ip": "10.0.0.1"}],
            "qosClass": "BestEffort",
            "startTime": started,
        }
        containers = [c.get("name", "") for c in pod["spec"].get("containers") or [] if isinstance(c, dict)]
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
                "conditions": [_cond("PodScheduled", "True", started)],
                "containerStatuses": [
                    _cstatus(c, images[c], False, 0, {"waiting": {"reason": "ContainerCreating"}})
                    for c in containers
                ],
            },
        )
        await asyncio.sleep(self.pending_seconds)
        ip = f"10.244.0.{(hash(uid) % 250) + 2}"
        restarts = 0
        last_state: dict[str, Any] = {}
        policy = pod["spec"].get("restartPolicy", "Always")
        while True:
            pod = self._pod(ns, name, uid)
            if pod is None:
                return
            run_start = now_rfc3339()
            running = {
                **base,
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "conditions": _conds("True", started, run_start),
                "containerStatuses": [
                    _cstatus(c, images[c], True, restarts, {"running": {"startedAt": run_start}}, last_state)
                    for c in containers
                ],
            }
            if not self._write_status(ns, name, uid, running):
                return
            outcome = self.rule(pod)
            self._logs[uid] = self._logs.get(uid, "") + (
                outcome.logs if outcome.logs is not None else echo_output(pod)
            )
            await asyncio.sleep(self.run_seconds if outcome.run_seconds is None else outcome.run_seconds)
            finished = now_rfc3339()
            code = outcome.exit_code
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
                        "conditions": _conds("False", started, finished, reason="PodCompleted"),
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
            wait_reason = "CrashLoopBackOff" if code != 0 else "Completed"
            self._write_status(
                ns,
                name,
                uid,
                {
                    **base,
                    "phase": "Running",
                    "podIP": ip,
                    "podIPs": [{"ip": ip}],
                    "conditions": _conds("False", started, finished, reason="ContainersNotReady"),
                    "containerStatuses": [
                        _cstatus(
                            c,
                            images[c],
                            False,
                            restarts,
                            {
                                "waiting": {
                                    "reason": wait_reason,
                                    "message": f"back-off restarting failed container {c}",
                                }
                            },
                            last_state,
                        )
                        for c in containers
                    ],
                },
            )
            await asyncio.sleep(min(self.restart_backoff * 2 ** (restarts - 1), 2.0))


def _cond(typ: str, status: str, ts: str, reason: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"type": typ, "status": status, "lastProbeTime": None, "lastTransitionTime": ts}
    if reason:
        c["reason"] = reason
    return c


def _conds(ready: str, scheduled: str, ts: str, reason: str | None = None) -> list[dict[str, Any]]:
    return [
        _cond("PodReadyToStartContainers", "True", scheduled),
        _cond("Initialized", "True", scheduled),
        _cond("Ready", ready, ts, reason),
        _cond("ContainersReady", ready, ts, reason),
        _cond("PodScheduled", "True", scheduled),
    ]


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
