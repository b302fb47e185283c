"""A kube-scheduler stand-in: binds each Pod without a node (of scheduler `default-scheduler`) to a Node
that passes kube-scheduler's filters, and records its events.k8s.io Events as the real one does.

Filters, in the default profile's order, with their reasons: NodeUnschedulable (`spec.unschedulable`
not tolerated: "node(s) were unschedulable"), TaintToleration (a NoSchedule/NoExecute taint not
tolerated: "node(s) had untolerated taint(s)"), NodeAffinity (`nodeSelector` and required node
affinity: "node(s) didn't match Pod's node affinity/selector"; its PreFilter narrows a Pod whose
terms all name nodes by `metadata.name`, as a DaemonSet's do, to those nodes: "node(s) didn't satisfy
plugin(s) [NodeAffinity]" for the others) and NodeResourcesFit (the Pod's requests, as
resourcehelper.PodRequests sums them, against allocatable less the requests of the Pods bound there:
"Too many pods", "Insufficient cpu", "Insufficient memory", ...). Only Nodes whose Ready condition is
True are candidates: a Node no kubelet posts status for gets the not-ready/unreachable taint from the
real node lifecycle controller within a minute, which is not waited for here. Among candidates the
one running the fewest Pods wins. A Pod that fits nowhere gets the `PodScheduled=False`
(`Unschedulable`) condition and a `FailedScheduling` Event with the real message ("0/1 nodes are
available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not
helpful for scheduling."), and is tried again when a Node changes.

Preemption finds no victims (every Pod has the same priority): a node short of resources the Pod
could fit in says "No preemption victims found for incoming pod", the others "Preemption is not
helpful for scheduling".

Not simulated: host ports, volumes and topology, pod (anti-)affinity, spreading, priorities and
preemption, scheduling gates, other schedulers' Pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.apiextensions import celquantity
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
_REASON_PREFILTER = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
_NO_VICTIMS = "No preemption victims found for incoming pod"
_NOT_HELPFUL = "Preemption is not helpful for scheduling"


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


def prefilter_names(pod: Obj) -> set[str] | None:
    """NodeAffinity's PreFilter: when every required term names nodes (`metadata.name In`), only
    those nodes are considered; None: every node."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        return None
    names: set[str] = set()
    for term in required.get("nodeSelectorTerms") or []:
        term_names: set[str] | None = None
        for f in (term or {}).get("matchFields") or [] if isinstance(term, dict) else []:
            if isinstance(f, dict) and f.get("key") == "metadata.name" and f.get("operator") == "In":
                values = {str(v) for v in f.get("values") or []}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None  # a term without names: every node may match (the terms are ORed)
        names |= term_names
    return names


def _scaled(value: Any, scale: int) -> int:
    """A quantity times 10**scale, rounded up (MilliValue with 3, Value with 0); bad ones are 0."""
    try:
        q = celquantity.parse(str(value))
    except celquantity.QuantityError:
        return 0
    exp = q.exponent + scale
    if exp >= 0:
        return q.mantissa * 10**exp
    return -((-q.mantissa) // 10**-exp)


def _amounts(requests: Any) -> dict[str, int]:
    """Requests as integers: cpu in millicores, the rest in units."""
    out: dict[str, int] = {}
    for name, value in (requests or {}).items() if isinstance(requests, dict) else []:
        out[str(name)] = _scaled(value, 3 if name == "cpu" else 0)
    return out


def _plus(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def pod_requests(pod: Obj) -> dict[str, int]:
    """resourcehelper.PodRequests: the containers' requests summed, each init container's (with the
    sidecars started before it) as a floor, sidecars added, the overhead added; pod-level requests
    replace cpu and memory."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for c in spec.get("containers") or []:
        if isinstance(c, dict):
            total = _plus(total, _amounts((c.get("resources") or {}).get("requests")))
    sidecars: dict[str, int] = {}
    floor: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        if not isinstance(c, dict):
            continue
        req = _amounts((c.get("resources") or {}).get("requests"))
        if c.get("restartPolicy") == "Always":
            sidecars = _plus(sidecars, req)
            total = _plus(total, req)
            req = sidecars
        else:
            req = _plus(req, sidecars)
        floor = {k: max(floor.get(k, 0), req.get(k, 0)) for k in {*floor, *req}}
    total = {k: max(total.get(k, 0), floor.get(k, 0)) for k in {*total, *floor}}
    level = _amounts((spec.get("resources") or {}).get("requests"))
    for name in ("cpu", "memory"):
        if name in level:
            total[name] = level[name]
    return _plus(total, _amounts(spec.get("overhead")))


def _insufficient(pod: Obj, node: Obj, bound: list[Obj]) -> tuple[list[str], bool]:
    """fitsRequest: the NodeResourcesFit reasons, and whether one is unresolvable (the Pod asks for
    more than the node has at all)."""
    allocatable = _amounts((node.get("status") or {}).get("allocatable"))
    reasons: list[str] = []
    unresolvable = False
    if len(bound) + 1 > allocatable.get("pods", 0):
        reasons.append("Too many pods")
    want = pod_requests(pod)
    if not any(want.values()):
        return reasons, unresolvable
    used: dict[str, int] = {}
    for p in bound:
        used = _plus(used, pod_requests(p))
    basic = ("cpu", "memory", "ephemeral-storage")
    names = [*basic, *sorted(k for k in want if k not in (*basic, "pods"))]
    for name in names:
        need = want.get(name, 0)
        if need > 0 and need > allocatable.get(name, 0) - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or need > allocatable.get(name, 0)
    return reasons, unresolvable


def filter_reason(pod: Obj, node: Obj, bound: list[Obj] | None = None) -> str | None:
    """Why `node` cannot take `pod` (the first failing filter's reasons), None when it can; with
    `bound` (the Pods bound there) NodeResourcesFit runs too."""
    reasons = filter_reasons(pod, node, bound)
    return ", ".join(reasons[0]) if reasons else None


def filter_reasons(pod: Obj, node: Obj, bound: list[Obj] | None = None) -> tuple[list[str], bool] | None:
    """The first failing filter's reasons and whether preemption could help, None when it passes."""
    spec, nspec = pod.get("spec") or {}, node.get("spec") or {}
    tolerations = spec.get("tolerations")
    if nspec.get("unschedulable") and not tolerates(
        tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    ):
        return [_REASON_UNSCHEDULABLE], False
    for taint in nspec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return [_REASON_TAINTS], False
    if not affinity_matches(pod, node):
        return [_REASON_AFFINITY], False
    if bound is not None:
        reasons, unresolvable = _insufficient(pod, node, bound)
        if reasons:
            return reasons, not unresolvable
    return None


def node_ready(node: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def fit_error(pod: Obj, nodes: list[Obj], bound: dict[str, list[Obj]] | None = None) -> str:
    """FitError.Error() with DefaultPreemption's message (no victims where resources fall short)."""
    reasons: dict[str, int] = {}
    preemption: dict[str, int] = {}
    names = prefilter_names(pod)

    def count(table: dict[str, int], reason: str) -> None:
        table[reason] = table.get(reason, 0) + 1

    for node in nodes:
        if names is not None and node["metadata"]["name"] not in names:
            count(reasons, _REASON_PREFILTER)
            count(preemption, _NOT_HELPFUL)
            continue
        found = filter_reasons(pod, node, (bound or {}).get(node["metadata"]["name"], []))
        if found is None:  # passes the filters but is not Ready: the not-ready taint
            found = ([_REASON_TAINTS], False)
        for reason in found[0]:
            count(reasons, reason)
        count(preemption, _NO_VICTIMS if found[1] else _NOT_HELPFUL)
    histogram = sorted(f"{n} {r}" for r, n in reasons.items())
    msg = f"0/{len(nodes)} nodes are available:"
    if histogram:
        msg += f" {', '.join(histogram)}."
    after = f"0/{len(nodes)} nodes are available:"
    if preemption:
        after += f" {', '.join(sorted(f'{n} {r}' for r, n in preemption.items()))}."
    return f"{msg} preemption: {after}"


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
            elif (event.obj.get("spec") or {}).get("nodeName") and (
                event.type == "DELETED" or P.is_terminal(event.obj)
            ):
                # a bound Pod went away (AssignedPodDelete): its resources are free again
                for pod in self.list(self.primary):
                    if self._pending(pod):
                        yield (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
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
        bound: dict[str, list[Obj]] = {}
        for p in self.list(self.primary):
            on = (p.get("spec") or {}).get("nodeName")
            if on and not P.is_terminal(p):
                bound.setdefault(on, []).append(p)
        names = prefilter_names(pod)
        fits = [
            n
            for n in nodes
            if (names is None or n["metadata"]["name"] in names)
            and node_ready(n)
            and filter_reasons(pod, n, bound.get(n["metadata"]["name"], [])) is None
        ]
        if not fits:
            self._unschedulable(pod, nodes, bound)
            return
        node = min(fits, key=lambda n: (len(bound.get(n["metadata"]["name"], [])), n["metadata"]["name"]))
        target = node["metadata"]["name"]
        podbinding.bind(self.store, namespace, name, target, rfc3339(self.clock.now()))
        msg = f"Successfully assigned {namespace}/{name} to {target}"
        self.events.event(pod, None, NORMAL, "Scheduled", "Binding", msg)

    def _unschedulable(self, pod: Obj, nodes: list[Obj], bound: dict[str, list[Obj]]) -> None:
        msg = fit_error(pod, nodes, bound)
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
