"""POST pods/NAME/eviction, as kube-apiserver v1.37.2's EvictionREST answers it
(pkg/registry/core/pod/storage/eviction.go): a delete that a PodDisruptionBudget may refuse, judged on
the budget's *status* as the disruption controller last wrote it, never recomputed here.

- A Pod that is Pending, Succeeded, Failed or already being deleted is evicted whatever the budgets.
- Otherwise the Pod's budgets (same namespace, selector matching its labels): none, it is deleted; two
  or more, the answer is a 500 Status saying the subresource does not support it.
- A budget the controller has not observed yet (`status.observedGeneration` behind `generation`, as
  on a server without a controller-manager) refuses with 429 "... is still being processed by the
  server." (Retry-After: 10); a negative `disruptionsAllowed` is 403; zero is 429 with the budget's
  numbers; otherwise `disruptionsAllowed` goes down by one, the Pod is noted in `disruptedPods` and
  the status written (not for a dry run).
- A Pod that is not Ready may go anyway when the budget says `unhealthyPodEvictionPolicy: AlwaysAllow`,
  or when the budget is satisfied (currentHealthy >= desiredHealthy > 0).
- The evicted Pod first gets the `DisruptionTarget` condition (`EvictionByEvictionAPI`), then the
  delete, with the Pod's resourceVersion as precondition where the real handler sets one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.server import wire
from pyscaffold_op.envtest.server.protocol import HttpRequest, Response, Target, json_response
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339

if TYPE_CHECKING:
    from pyscaffold_op.envtest.server.handlers import Api
    from pyscaffold_op.envtest.storage.objectstore import Store

PDBS = ("policy", "v1", "poddisruptionbudgets")
MAX_DISRUPTED_PODS = 2000
VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def evict(api: Api, req: HttpRequest, t: Target) -> Response:
    store = api.store
    body = wire.read_body(req, t.info, check_kind=False)
    ns, name = t.namespace or "", t.name or ""
    meta = given if isinstance(given := body.get("metadata"), dict) else {}
    if meta.get("name", "") != name:
        raise E.bad_request("name in URL does not match name in Eviction object")
    opts: dict[str, Any] = dict(found) if isinstance(found := body.get("deleteOptions"), dict) else {}
    if opts.get("ignoreStoreReadErrorWithClusterBreakingPotential") is True:
        raise E.invalid(
            "policy",
            "Eviction",
            name,
            [
                E.cause(
                    "FieldValueInvalid",
                    "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
                    "Invalid value: true: can not be set for pod eviction, try after removing the option",
                )
            ],
        )
    dry_run = "All" in (opts.get("dryRun") or []) or wire.dry_run(req)
    user_rv = ((opts.get("preconditions") or {}).get("resourceVersion")) or None
    pod = store.get(t.info, ns, name)
    if _can_ignore_budget(pod):
        rv = user_rv
        if rv is None and _enforce_rv(pod):
            rv = pod["metadata"]["resourceVersion"]
        _condition_and_delete(store, t, pod, opts, rv, dry_run)
        return _success()
    budgets = _budgets(store, pod)
    if len(budgets) > 1:
        return json_response(
            500,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                "does not support.",
                "code": 500,
            },
        )
    if not budgets:
        _condition_and_delete(store, t, pod, opts, user_rv, dry_run)
        return _success()
    pdb = budgets[0]
    status = pdb.get("status") or {}
    spec = pdb.get("spec") or {}
    pin_rv = False
    if not _ready(pod) and (
        spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
        or (int(status.get("currentHealthy", 0)) >= int(status.get("desiredHealthy", 0)) > 0)
    ):
        pin_rv = True
    else:
        _check_and_decrement(store, pdb, name, dry_run)
    rv = user_rv or (pod["metadata"]["resourceVersion"] if pin_rv else None)
    try:
        _condition_and_delete(store, t, pod, opts, rv, dry_run)
    except E.StatusError as err:
        if err.code == 409 and pin_rv and user_rv is None:
            raise _still_processing(pdb["metadata"]["name"]) from err
        raise
    return _success()


def _success() -> Response:
    return json_response(
        201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    )


def _can_ignore_budget(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _enforce_rv(pod: dict[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _budgets(store: Store, pod: dict[str, Any]) -> list[dict[str, Any]]:
    ns = pod["metadata"].get("namespace", "")
    pdbs, _rv, _c, _r = store.list(store.info(*PDBS), ns)
    return [pdb for pdb in pdbs if labels.selects((pdb.get("spec") or {}).get("selector"), pod)]


def _still_processing(name: str) -> E.StatusError:
    """createTooManyRequestsError."""
    return E.StatusError(
        429,
        "TooManyRequests",
        VIOLATES,
        {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {name} is still being processed by the server.",
                }
            ],
            "retryAfterSeconds": 10,
        },
    )


def _check_and_decrement(store: Store, pdb: dict[str, Any], pod_name: str, dry_run: bool) -> None:
    name = pdb["metadata"]["name"]
    status = dict(pdb.get("status") or {})
    if int(status.get("observedGeneration", 0)) < int(pdb["metadata"].get("generation", 1)):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise _budget_forbidden(
            name,
            "pdb disruptions allowed is negative",
            f"The disruption budget {name} does not allow evicting pods currently: "
            "pdb disruptions allowed is negative",
        )
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise _budget_forbidden(
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            f"The disruption budget {name} does not allow evicting pods currently: too many pending "
            "evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        cond = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
        healthy, desired = int(status.get("currentHealthy", 0)), int(status.get("desiredHealthy", 0))
        false_with_message = cond is not None and cond.get("status") == "False" and cond.get("message")
        if false_with_message and cond is not None and cond.get("reason") == "SyncFailed":
            msg = (
                f"The disruption budget {name} does not allow evicting pods currently because it failed "
                f"sync: {cond['message']}"
            )
        elif healthy <= desired:
            msg = f"The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
        elif false_with_message and cond is not None:
            msg = (
                f"The disruption budget {name} does not allow evicting pods currently "
                f"({cond.get('reason')}): {cond['message']}"
            )
        else:
            msg = f"The disruption budget {name} does not allow evicting pods currently"
        raise E.StatusError(
            429, "TooManyRequests", VIOLATES, {"causes": [{"reason": "DisruptionBudget", "message": msg}]}
        )
    status["disruptionsAllowed"] = allowed - 1
    if status["disruptionsAllowed"] == 0:
        status["conditions"] = _disruption_allowed_false(status)
    if dry_run:
        return
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now_rfc3339()}
    meta = pdb["metadata"]
    store.update(
        store.info(*PDBS),
        meta.get("namespace", ""),
        meta["name"],
        {**pdb, "status": status},
        subresource="status",
        manager="kube-apiserver",
    )


def _disruption_allowed_false(status: dict[str, Any]) -> list[dict[str, Any]]:
    """UpdateDisruptionAllowedCondition with no disruption left (SetStatusCondition's rules)."""
    conditions = [dict(c) for c in status.get("conditions") or []]
    new = {
        "type": "DisruptionAllowed",
        "status": "False",
        "observedGeneration": status.get("observedGeneration", 0),
        "reason": "InsufficientPods",
        "message": "",
    }
    for c in conditions:
        if c.get("type") == "DisruptionAllowed":
            if c.get("status") != "False":
                c["lastTransitionTime"] = now_rfc3339()
            c.update(new)
            return conditions
    return [*conditions, {**new, "lastTransitionTime": now_rfc3339()}]


def _budget_forbidden(name: str, why: str, cause: str) -> E.StatusError:
    err = E.forbidden("policy", "poddisruptionbudget", name, why)
    err.details = {**(err.details or {}), "causes": [{"reason": "DisruptionBudget", "message": cause}]}
    return err


def _condition_and_delete(
    store: Store,
    t: Target,
    pod: dict[str, Any],
    opts: dict[str, Any],
    rv: str | None,
    dry_run: bool,
) -> None:
    """addConditionAndDeletePod: DisruptionTarget=True (a status write without a field manager), then
    the delete with the eviction's options."""
    ns, name = t.namespace or "", t.name or ""
    preconditions = dict(opts.get("preconditions") or {})
    if rv is not None:
        preconditions["resourceVersion"] = rv
    if not dry_run:
        current = store.get(t.info, ns, name)
        uid = preconditions.get("uid")
        if uid and uid != current["metadata"]["uid"]:
            raise E.conflict(
                "",
                "Pod",
                name,
                f"the UID in the precondition ({uid}) does not match the UID in record "
                f"({current['metadata']['uid']}). The object might have been deleted and then recreated",
            )
        if rv is not None and rv != current["metadata"]["resourceVersion"]:
            raise E.conflict(
                "",
                "Pod",
                name,
                f"the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in "
                f"record ({current['metadata']['resourceVersion']}). The object might have been modified",
            )
        status = dict(current.get("status") or {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "DisruptionTarget"), None)
        since = (
            old["lastTransitionTime"] if old is not None and old.get("status") == "True" else now_rfc3339()
        )
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": since,
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
        )
        updated = store.update(
            t.info,
            ns,
            name,
            {**current, "status": {**status, "conditions": conditions}},
            subresource="status",
        )
        if rv is not None:
            preconditions["resourceVersion"] = updated["metadata"]["resourceVersion"]
    grace = opts.get("gracePeriodSeconds")
    store.delete(
        t.info,
        ns,
        name,
        propagation=opts.get("propagationPolicy"),
        preconditions=preconditions or None,
        dry_run=dry_run,
        grace_period=grace if isinstance(grace, int) else None,
    )
