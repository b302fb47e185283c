"""A kube-scheduler stand-in: binds each Pod without a node (of scheduler `default-scheduler`) to a Node
that passes kube-scheduler's filters, and records its events.k8s.io Events as the real one does.

Filters, in the default profile's order, with their reasons: NodeUnschedulable (`spec.unschedulable`
not tolerated: "node(s) were unschedulable"), TaintToleration (a NoSchedule/NoExecute taint not
tolerated: "node(s) had untolerated taint(s)") and NodeAffinity (`nodeSelector` and required node
affinity: "node(s) didn't match Pod's node affinity/selector"). Only Nodes whose Ready condition is
True are candidates: a Node no kubelet posts status for gets the not-ready/unreachable taint from the
real node lifecycle controller within a minute, which is not waited for here. Among candidates the
one running the fewest Pods wins. A Pod that fits nowhere gets the `PodScheduled=False`
(`Unschedulable`) condition and a `FailedScheduling` Event with the real message ("0/1 nodes are
available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not
helpful for scheduling."), and is tried again when a Node changes.

Not simulated: resources (requests against allocatable), ports, volumes and topology, pod
(anti-)affinity, spreading, priorities and preemption, scheduling gates, other schedulers' Pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.clock import Clock
from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING, EventsRecorder
from pyscaffold_op.envtest.controllers.timestamps import rfc3339
from pyscaffold_op.envtest.registry import podbinding
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event, Store

NODES = ("", "v1", "nodes")
SCHEDULER_NAME = "default-scheduler"
MANAGER = "kube-scheduler"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_REASON_TAINTS = "node(s) had untolerated taint(s)"
_REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"


def tolerates(tolerations: Any, taint: Obj) -> bool:
    """TolerationsTolerateTaint (Toleration.ToleratesTaint; the comparison operators are off)."""
    for t in tolerations or []:
        if not isinstance(t, dict):
            continue
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" or (op == "Equal" and (t.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def _expression_matches(req: Obj, value: str | None) -> bool:
    op, values = req.get("operator"), [str(v) for v in req.get("values") or []]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term_matches(term: Any, node: Obj) -> bool:
    """A NodeSelectorTerm: every expression holds; an empty term matches nothing."""
    if not isinstance(term, dict):
        return False
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return False
    labels = node["metadata"].get("labels") or {}
    if not all(_expression_matches(e, labels.get(e.get("key"))) for e in exprs if isinstance(e, dict)):
        return False
    name = node["metadata"]["name"]
    return all(
        _expression_matches(f, name if f.get("key") == "metadata.name" else None)
        for f in fields
        if isinstance(f, dict)
    )


def affinity_matches(pod: Obj, node: Obj) -> bool:
    """NodeAffinity's filter: the nodeSelector's labels and the required node affinity's terms (ORed)."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        return True
    return any(_term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def filter_reason(pod: Obj, node: Obj) -> str | None:
    """Why `node` cannot take `pod` (the first failing filter's reason), None when it can."""
    spec, nspec = pod.get("spec") or {}, node.get("spec") or {}
    tolerations = spec.get("tolerations")
    if nspec.get("unschedulable") and not tolerates(
        tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    ):
        return _REASON_UNSCHEDULABLE
    for taint in nspec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return _REASON_TAINTS
    if not affinity_matches(pod, node):
        return _REASON_AFFINITY
    return None


def node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def fit_error(pod: Obj, nodes: list[Obj]) -> str:
    """FitError.Error() with DefaultPreemption's message for filters preemption cannot help with."""
    reasons: dict[str, int] = {}
    for node in nodes:
        reason = filter_reason(pod, node) or "node(s) had untolerated taint(s)"  # not Ready: not-ready taint
        reasons[reason] = reasons.get(reason, 0) + 1
    histogram = sorted(f"{n} {r}" for r, n in reasons.items())
    msg = f"0/{len(nodes)} nodes are available:"
    if histogram:
        msg += f" {', '.join(histogram)}."
    preemption = f"0/{len(nodes)} nodes are available:"
    if nodes:
        preemption += f" {len(nodes)} Preemption is not helpful for scheduling."
    return f"{msg} preemption: {preemption}"


class Scheduler(SimulatedController):
    primary = ("", "v1", "pods")
    manager = MANAGER

    def __init__(self, *, instance: str = "default-scheduler-envtest-control-plane") -> None:
        super().__init__()
        self.events = EventsRecorder(SCHEDULER_NAME, instance, manager=MANAGER)

    def attach(self, store: Store, clock: Clock, *, events: bool = True) -> None:
        if events:
            self.events.attach(store, clock)
        super().attach(store, clock, events=events)

    def detach(self) -> None:
        self.events.detach()
        super().detach()

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.gr == ("", "pods"):
            if event.type != "DELETED" and self._pending(event.obj):
                yield (event.obj["metadata"].get("namespace", ""), event.obj["metadata"]["name"])
        elif event.gr == ("", "nodes") and event.type != "DELETED":
            for pod in self.list(self.primary):  # a Node appeared or changed: pending Pods may fit now
                if self._pending(pod):
                    yield (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])

    @staticmethod
    def _pending(pod: Obj) -> bool:
        spec = pod.get("spec") or {}
        return (
            not spec.get("nodeName")
            and not pod["metadata"].get("deletionTimestamp")
            and not P.is_terminal(pod)
            and spec.get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME
        )

    def reconcile(self, namespace: str, name: str) -> None:
        pod = self.get(self.primary, namespace, name)
        if pod is None or not self._pending(pod):
            return
        nodes = self.list(NODES)
        fits = [n for n in nodes if node_ready(n) and filter_reason(pod, n) is None]
        if not fits:
            self._unschedulable(pod, nodes)
            return
        load: dict[str, int] = {}
        for p in self.list(self.primary):
            bound = (p.get("spec") or {}).get("nodeName")
            if bound and not P.is_terminal(p):
                load[bound] = load.get(bound, 0) + 1
        node = min(fits, key=lambda n: (load.get(n["metadata"]["name"], 0), n["metadata"]["name"]))
        target = node["metadata"]["name"]
        podbinding.bind(self.store, namespace, name, target, rfc3339(self.clock.now()))
        msg = f"Successfully assigned {namespace}/{name} to {target}"
        self.events.event(pod, None, NORMAL, "Scheduled", "Binding", msg)

    def _unschedulable(self, pod: Obj, nodes: list[Obj]) -> None:
        msg = fit_error(pod, nodes)
        status = dict(pod.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": rfc3339(self.clock.now()),
            "reason": "Unschedulable",
            "message": msg,
        }
        if old is not None and old.get("status") == "False":
            cond["lastTransitionTime"] = old.get("lastTransitionTime")
        if old == cond:
            return  # already said so: no new Event either (the real queue backs off)
        status["conditions"] = [*conditions, cond]
        self.write_status(self.primary, pod, status)
        self.events.event(pod, None, WARNING, "FailedScheduling", "Scheduling", msg)
