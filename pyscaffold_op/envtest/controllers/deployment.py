"""The Deployment controller, kube-controller-manager v1.37.2's `pkg/controller/deployment` step by
step: one ReplicaSet per pod template (named by its pod-template-hash), revisions renumbered when an
old template comes back (so `kubectl rollout undo` finds the right one), the revision history, the
strategies (RollingUpdate within maxSurge/maxUnavailable, Recreate), proportional scaling of the live
ReplicaSets, pause, the deprecated rollback annotation, cleanup beyond revisionHistoryLimit, the
status and the Available/Progressing/ReplicaFailure conditions `kubectl rollout status` reads, and
the `ScalingReplicaSet` Events.

Each reconcile does what one sync of the real controller does; the next change (a ReplicaSet's new
status) brings the next sync, as the real informers do. The revision annotation of the Deployment is
written with its status, as the real controller writes it (a Deployment's status strategy takes the
annotations; a plain update would bump the generation). The difference: the pod-template-hash is not
the real value (see `template_hash`)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers import deploymentutil as U
from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import (
    SimulatedController,
    controller_ref,
    new_owner_ref,
    owner_keys,
)
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

RS = ("apps", "v1", "replicasets")
HASH_LABEL = U.HASH_LABEL
REVISION = U.REVISION
template_hash = U.template_hash
_DNS1123_SUBDOMAIN_MAX = 253


class DeploymentController(SimulatedController):
    primary = ("apps", "v1", "deployments")
    owns = ("apps", "replicasets")
    kind = "Deployment"
    component = "deployment-controller"

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == self.owns and controller_ref(event.obj) is None:
            yield from self._deployments_selecting(event.obj)  # an orphan to adopt
        if event.gr == ("", "pods") and event.type == "DELETED":
            # Recreate waits for the old pods to be gone: their ReplicaSet's owner looks again
            for ns, rs_name in owner_keys(event, "ReplicaSet"):
                rs = self.get(RS, ns, rs_name)
                if rs is not None:
                    yield from owner_keys_of(rs, "Deployment")

    def _deployments_selecting(self, rs: Obj) -> Iterable[Key]:
        labels = rs["metadata"].get("labels") or {}
        if not labels:
            return
        ns = rs["metadata"].get("namespace", "")
        for d in self.list(self.primary, ns):
            if P.selector_matcher((d.get("spec") or {}).get("selector"))(rs):
                yield (ns, d["metadata"]["name"])

    # -- syncDeployment ----------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> None:
        found = self.get(self.primary, namespace, name)
        if found is None:
            return
        d = copy.deepcopy(found)
        selector = (d.get("spec") or {}).get("selector") or {}
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            self.record(
                d,
                WARNING,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            status = d.get("status") or {}
            if int(status.get("observedGeneration", 0)) < d["metadata"].get("generation", 1):
                self.write_status(
                    self.primary, d, {**status, "observedGeneration": d["metadata"]["generation"]}
                )
            return
        rss = self._claim_replica_sets(d)
        if d["metadata"].get("deletionTimestamp"):
            new, olds = self._all_replica_sets(d, rss, create=False)
            self._sync_deployment_status(d, [*olds, new], new)
            return
        d = self._check_paused_conditions(d)
        spec = d.get("spec") or {}
        if spec.get("paused"):
            self._sync(d, rss)
        elif _rollback_to(d) is not None:
            self._rollback(d, rss)
        elif self._is_scaling_event(d, rss):
            self._sync(d, rss)
        elif U.is_rolling(d):
            self._rollout_rolling(d, rss)
        else:
            self._rollout_recreate(d, rss)

    def _claim_replica_sets(self, d: Obj) -> list[Obj]:
        """ClaimReplicaSets: owned ones that still match, orphans that match (adopted), and owned ones
        that no longer match released."""
        uid = d["metadata"]["uid"]
        match = P.selector_matcher(d["spec"].get("selector"))
        claimed = []
        for rs in self.list(RS, d["metadata"].get("namespace") or None):
            ref = controller_ref(rs)
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if match(rs):
                    claimed.append(rs)
                elif not d["metadata"].get("deletionTimestamp"):
                    self._set_owner_refs(
                        rs, [r for r in rs["metadata"]["ownerReferences"] if r.get("uid") != uid]
                    )
                continue
            if (
                d["metadata"].get("deletionTimestamp")
                or rs["metadata"].get("deletionTimestamp")
                or not match(rs)
            ):
                continue
            refs = [*(rs["metadata"].get("ownerReferences") or []), new_owner_ref(d)]
            adopted = self._set_owner_refs(rs, refs)
            if adopted is not None:
                claimed.append(adopted)
        return claimed

    def _set_owner_refs(self, rs: Obj, refs: list[Obj]) -> Obj | None:
        meta = {**rs["metadata"], "ownerReferences": refs}
        if not refs:
            meta.pop("ownerReferences")
        try:
            return self.update(RS, {**rs, "metadata": meta})
        except StatusError:
            return None

    def _check_paused_conditions(self, d: Obj) -> Obj:
        if not U.has_progress_deadline(d):
            return d
        status = d.setdefault("status", {})
        cond = U.get_condition(status, "Progressing")
        if cond is not None and cond.get("reason") == "ProgressDeadlineExceeded":
            return d
        paused_cond = cond is not None and cond.get("reason") == "DeploymentPaused"
        paused = bool(d["spec"].get("paused"))
        if paused and not paused_cond:
            U.set_condition(
                status,
                U.new_condition(
                    "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", self._now()
                ),
            )
        elif not paused and paused_cond:
            U.set_condition(
                status,
                U.new_condition(
                    "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", self._now()
                ),
            )
        else:
            return d
        return self._write_deployment_status(d)

    # -- the new and old ReplicaSets ---------------------------------------------------------------

    def _all_replica_sets(self, d: Obj, rss: list[Obj], *, create: bool) -> tuple[Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision."""
        olds = U.find_old(d, rss)
        return self._new_replica_set(d, rss, olds, create), olds

    def _new_replica_set(self, d: Obj, rss: list[Obj], olds: list[Obj], create: bool) -> Obj | None:
        """getNewReplicaSet: the ReplicaSet of the current template, its revision raised above every
        old one (an old template that comes back gets the next revision, its old number goes to the
        revision history), created when `create` and there is none."""
        existing = U.find_new(d, rss)
        new_revision = str(U.max_revision(olds) + 1)
        spec = d["spec"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        if existing is not None:
            rs = copy.deepcopy(existing)
            changed = U.set_new_rs_annotations(d, rs, new_revision, exists=True)
            if changed or int(rs["spec"].get("minReadySeconds") or 0) != min_ready:
                _set_min_ready(rs, min_ready)
                return self.update(RS, rs)  # the next sync brings the Deployment's revision along
            needs_update = U.set_deployment_revision(d, U.annotations_of(rs).get(REVISION, ""))
            status = d.setdefault("status", {})
            if U.has_progress_deadline(d) and U.get_condition(status, "Progressing") is None:
                msg = f'Found new replica set "{rs["metadata"]["name"]}"'
                U.set_condition(
                    status, U.new_condition("Progressing", "True", "FoundNewReplicaSet", msg, self._now())
                )
                needs_update = True
            if needs_update:
                self._write_deployment_status(d)
            return rs
        if not create:
            return None
        template = copy.deepcopy(spec.get("template") or {})
        h = U.template_hash(template, (d.get("status") or {}).get("collisionCount"))
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: h}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": _replica_set_name(d["metadata"]["name"], h),
                "labels": tmeta["labels"],
                "ownerReferences": [new_owner_ref(d)],
            },
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        _set_min_ready(rs, min_ready)
        count = U.new_rs_new_replicas(d, [*olds, rs], rs)
        rs["spec"]["replicas"] = count
        U.set_new_rs_annotations(d, rs, new_revision, exists=False)
        ns = d["metadata"].get("namespace", "")
        already = False
        try:
            created = self.create(RS, ns, rs)
        except StatusError as err:
            if err.code == 409:
                found = self.get(RS, ns, rs["metadata"]["name"])
                ref = controller_ref(found) if found is not None else None
                if (
                    found is not None
                    and ref is not None
                    and ref.get("uid") == d["metadata"]["uid"]
                    and U.equal_ignore_hash(spec.get("template"), found["spec"].get("template"))
                ):
                    created, already = found, True
                else:  # a hash collision: the next template hash will differ
                    status = d.setdefault("status", {})
                    status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
                    self._write_deployment_status(d)
                    raise
            elif err.code == 403:  # the namespace is terminating
                raise
            else:
                msg = f'Failed to create new replica set "{rs["metadata"]["name"]}": {err.message}'
                if U.has_progress_deadline(d):
                    status = d.setdefault("status", {})
                    U.set_condition(
                        status,
                        U.new_condition("Progressing", "False", "ReplicaSetCreateError", msg, self._now()),
                    )
                    self._write_deployment_status(d)
                self.record(d, WARNING, "ReplicaSetCreateError", msg)
                raise
        if not already and count > 0:
            self.record(
                d,
                NORMAL,
                "ScalingReplicaSet",
                f"Scaled up replica set {created['metadata']['name']} from 0 to {count}",
            )
        needs_update = U.set_deployment_revision(d, new_revision)
        if not already and U.has_progress_deadline(d):
            msg = f'Created new replica set "{created["metadata"]["name"]}"'
            U.set_condition(
                d.setdefault("status", {}),
                U.new_condition("Progressing", "True", "NewReplicaSetCreated", msg, self._now()),
            )
            needs_update = True
        if needs_update:
            self._write_deployment_status(d)
        return created

    # -- sync (paused, scaling) --------------------------------------------------------------------

    def _sync(self, d: Obj, rss: list[Obj]) -> None:
        new, olds = self._all_replica_sets(d, rss, create=False)
        self._scale(d, new, olds)
        if d["spec"].get("paused") and _rollback_to(d) is None:
            self._cleanup(d, olds)
        self._sync_deployment_status(d, [*olds, new], new)

    def _is_scaling_event(self, d: Obj, rss: list[Obj]) -> bool:
        new, olds = self._all_replica_sets(d, rss, create=False)
        for rs in U.active([*olds, new]):
            desired = U.annotations_of(rs).get(U.DESIRED_REPLICAS)
            try:
                if desired is not None and int(desired) != U.replicas(d):
                    return True
            except ValueError:
                continue
        return False

    def _scale(self, d: Obj, new: Obj | None, olds: list[Obj]) -> None:
        """scale: one live ReplicaSet takes the new size; a saturated new one lets the old ones go;
        otherwise (rolling updates) the change is spread over the live ones in proportion."""
        want = U.replicas(d)
        only = U.find_active_or_latest(new, olds)
        if only is not None:
            if U.replicas(only) != want:
                self._scale_replica_set(only, want, d, force=False)
            return
        if U.is_saturated(d, new):
            for old in U.active(olds):
                self._scale_replica_set(old, 0, d, force=False)
            return
        if not U.is_rolling(d):
            return
        live = U.active([*olds, new])
        allowed = want + U.max_surge(d) if want > 0 else 0
        to_add = allowed - sum(U.replicas(rs) for rs in live)
        if to_add > 0:
            live = U.by_size_newer(live)
        elif to_add < 0:
            live = U.by_size_older(live)
        added = 0
        sizes: dict[str, int] = {}
        for rs in live:
            if to_add != 0:
                share = U.rs_proportion(rs, d, to_add, added)
                sizes[rs["metadata"]["name"]] = U.replicas(rs) + share
                added += share
            else:
                sizes[rs["metadata"]["name"]] = U.replicas(rs)
        for i, rs in enumerate(live):
            name = rs["metadata"]["name"]
            if i == 0 and to_add != 0:
                sizes[name] = max(sizes[name] + to_add - added, 0)
            self._scale_replica_set(rs, sizes[name], d, force=True)

    def _scale_replica_set(self, rs: Obj, size: int, d: Obj, *, force: bool) -> tuple[bool, Obj]:
        if not force and U.replicas(rs) == size:
            return False, rs
        want = U.replicas(d)
        maximum = want + U.max_surge(d)
        resize = U.replicas(rs) != size
        if not resize and not U.replicas_annotations_need_update(rs, want, maximum):
            return False, rs
        old = U.replicas(rs)
        changed = copy.deepcopy(rs)
        changed["spec"]["replicas"] = size
        U.set_replicas_annotations(changed, want, maximum)
        updated = self.update(RS, changed)
        if resize:
            direction = "up" if old < size else "down"
            self.record(
                d,
                NORMAL,
                "ScalingReplicaSet",
                f"Scaled {direction} replica set {rs['metadata']['name']} from {old} to {size}",
            )
        return resize, updated

    # -- rollouts ----------------------------------------------------------------------------------

    def _rollout_rolling(self, d: Obj, rss: list[Obj]) -> None:
        new, olds = self._all_replica_sets(d, rss, create=True)
        assert new is not None
        all_rss = [*olds, new]
        if self._reconcile_new(d, all_rss, new) or self._reconcile_olds(d, all_rss, U.active(olds), new):
            self._sync_rollout_status(d, all_rss, new)
            return
        if _complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        self._sync_rollout_status(d, all_rss, new)

    def _reconcile_new(self, d: Obj, all_rss: list[Obj], new: Obj) -> bool:
        want = U.replicas(d)
        if U.replicas(new) == want:
            return False
        if U.replicas(new) > want:
            return self._scale_replica_set(new, want, d, force=False)[0]
        return self._scale_replica_set(new, U.new_rs_new_replicas(d, all_rss, new), d, force=False)[0]

    def _reconcile_olds(self, d: Obj, all_rss: list[Obj], olds: list[Obj], new: Obj) -> bool:
        if sum(U.replicas(rs) for rs in olds) == 0:
            return False
        min_available = U.replicas(d) - U.max_unavailable(d)
        new_unavailable = U.replicas(new) - U.status_of(new, "availableReplicas")
        max_scaled_down = sum(U.replicas(rs) for rs in all_rss) - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        olds, cleaned = self._cleanup_unhealthy(d, olds, max_scaled_down)
        scaled = self._scale_down_olds(d, [*olds, new], olds)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, d: Obj, olds: list[Obj], limit: int) -> tuple[list[Obj], int]:
        """Scale old ReplicaSets down by their unavailable replicas first (oldest first)."""
        olds = U.by_creation(olds)
        total = 0
        for i, rs in enumerate(olds):
            if total >= limit:
                break
            if U.replicas(rs) == 0 or U.replicas(rs) == U.status_of(rs, "availableReplicas"):
                continue
            down = min(limit - total, U.replicas(rs) - U.status_of(rs, "availableReplicas"))
            _, olds[i] = self._scale_replica_set(rs, U.replicas(rs) - down, d, force=False)
            total += down
        return olds, total

    def _scale_down_olds(self, d: Obj, all_rss: list[Obj], olds: list[Obj]) -> int:
        min_available = U.replicas(d) - U.max_unavailable(d)
        available = sum(U.status_of(rs, "availableReplicas") for rs in all_rss)
        if available <= min_available:
            return 0
        total, budget = 0, available - min_available
        for rs in U.by_creation(olds):
            if total >= budget:
                break
            if U.replicas(rs) == 0:
                continue
            down = min(U.replicas(rs), budget - total)
            self._scale_replica_set(rs, U.replicas(rs) - down, d, force=False)
            total += down
        return total

    def _rollout_recreate(self, d: Obj, rss: list[Obj]) -> None:
        new, olds = self._all_replica_sets(d, rss, create=False)
        all_rss = [*olds, new]
        scaled = False
        for rs in U.active(olds):
            scaled = self._scale_replica_set(rs, 0, d, force=False)[0] or scaled
        if scaled or self._old_pods_running(new, olds):
            self._sync_rollout_status(d, all_rss, new)
            return
        if new is None:
            new, olds = self._all_replica_sets(d, rss, create=True)
            all_rss = [*olds, new]
        assert new is not None
        self._scale_replica_set(new, U.replicas(d), d, force=False)
        if _complete(d, d.get("status") or {}):
            self._cleanup(d, olds)
        self._sync_rollout_status(d, all_rss, new)

    def _old_pods_running(self, new: Obj | None, olds: list[Obj]) -> bool:
        if sum(U.status_of(rs, "replicas") for rs in olds) > 0:
            return True
        return any(not P.is_terminal(pod) for rs in olds for pod in self.owned(P.PODS, rs))

    def _rollback(self, d: Obj, rss: list[Obj]) -> None:
        """The deprecated `deprecated.deployment.rollback.to` annotation (extensions/v1beta1's
        rollbackTo): the template of that revision (0: the previous one) comes back."""
        new, olds = self._all_replica_sets(d, rss, create=True)
        all_rss = [rs for rs in [*olds, new] if rs is not None]
        target = _rollback_to(d) or U.last_revision(all_rss)
        if target == 0:
            self.record(d, WARNING, "DeploymentRollbackRevisionNotFound", "Unable to find last revision.")
            self._clear_rollback_to(d)
            return
        for rs in all_rss:
            if U.revision(rs) != target:
                continue
            if not U.equal_ignore_hash(d["spec"].get("template"), rs["spec"].get("template")):
                template = copy.deepcopy(rs["spec"]["template"])
                template.setdefault("metadata", {}).setdefault("labels", {}).pop(HASH_LABEL, None)
                d["spec"]["template"] = template
                U.set_annotations_from(d, rs)
                if self._clear_rollback_to(d):
                    self.record(
                        d,
                        NORMAL,
                        "DeploymentRollback",
                        f'Rolled back deployment "{d["metadata"]["name"]}" to revision {target}',
                    )
            else:
                name = d["metadata"]["name"]
                msg = f'The rollback revision contains the same template as current deployment "{name}"'
                self.record(d, WARNING, "DeploymentRollbackTemplateUnchanged", msg)
                self._clear_rollback_to(d)
            return
        self.record(
            d, WARNING, "DeploymentRollbackRevisionNotFound", "Unable to find the revision to rollback to."
        )
        self._clear_rollback_to(d)

    def _clear_rollback_to(self, d: Obj) -> bool:
        U.annotations_of(d).pop(U.ROLLBACK_TO, None)
        current = self.get(self.primary, d["metadata"].get("namespace", ""), d["metadata"]["name"])
        if current is None:
            return False
        self.update(
            self.primary,
            {
                **current,
                "metadata": {**current["metadata"], "annotations": U.annotations_of(d)},
                "spec": d["spec"],
            },
        )
        return True

    def _cleanup(self, d: Obj, olds: list[Obj]) -> None:
        """cleanupDeployment: beyond revisionHistoryLimit, the lowest revisions go, if idle."""
        if not U.has_revision_history_limit(d):
            return
        alive = [rs for rs in olds if not rs["metadata"].get("deletionTimestamp")]
        diff = len(alive) - int(d["spec"]["revisionHistoryLimit"])
        for rs in U.by_revision(alive)[: max(diff, 0)]:
            status = rs.get("status") or {}
            if (
                U.status_of(rs, "replicas") != 0
                or U.replicas(rs) != 0
                or rs["metadata"].get("generation", 1) > int(status.get("observedGeneration", 0))
            ):
                continue
            self.delete(RS, rs)

    # -- status ------------------------------------------------------------------------------------

    def _calculate_status(self, d: Obj, all_rss: Sequence[Obj | None], new: Obj | None) -> Obj:
        rss = [rs for rs in all_rss if rs is not None]
        available = sum(U.status_of(rs, "availableReplicas") for rs in rss)
        total = sum(U.replicas(rs) for rs in rss)
        old = d.get("status") or {}
        status: Obj = {"observedGeneration": d["metadata"].get("generation", 1)}
        counts = {
            "replicas": sum(U.status_of(rs, "replicas") for rs in rss),
            "updatedReplicas": U.status_of(new, "replicas"),
            "readyReplicas": sum(U.status_of(rs, "readyReplicas") for rs in rss),
            "availableReplicas": available,
            "unavailableReplicas": max(total - available, 0),
        }
        status.update({k: v for k, v in counts.items() if v})
        terminating = _terminating(rss)
        if terminating is not None:
            status["terminatingReplicas"] = terminating
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if old.get("conditions"):
            status["conditions"] = copy.deepcopy(old["conditions"])
        if available >= U.replicas(d) - U.max_unavailable(d):
            cond = U.new_condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                self._now(),
            )
        else:
            cond = U.new_condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                self._now(),
            )
        U.set_condition(status, cond)
        return status

    def _sync_deployment_status(self, d: Obj, all_rss: Sequence[Obj | None], new: Obj | None) -> None:
        status = self._calculate_status(d, all_rss, new)
        if status != (d.get("status") or {}):
            self.write_status(self.primary, d, status)

    def _sync_rollout_status(self, d: Obj, all_rss: Sequence[Obj | None], new: Obj | None) -> None:
        """syncRolloutStatus: the status with the Progressing condition (complete, progressing or
        timed out against progressDeadlineSeconds) and the ReplicaSets' ReplicaFailure."""
        status = self._calculate_status(d, all_rss, new)
        old = d.get("status") or {}
        name = d["metadata"]["name"]
        if not U.has_progress_deadline(d):
            U.remove_condition(status, "Progressing")
        current = U.get_condition(old, "Progressing")
        complete_before = (
            status.get("replicas", 0) == status.get("updatedReplicas", 0)
            and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"
        )
        if U.has_progress_deadline(d) and not complete_before:
            rs_name = new["metadata"]["name"] if new is not None else None
            if _complete(d, status):
                msg = (
                    f'ReplicaSet "{rs_name}" has successfully progressed.'
                    if rs_name
                    else f'Deployment "{name}" has successfully progressed.'
                )
                U.set_condition(
                    status, U.new_condition("Progressing", "True", "NewReplicaSetAvailable", msg, self._now())
                )
            elif _progressing(old, status):
                msg = (
                    f'ReplicaSet "{rs_name}" is progressing.'
                    if rs_name
                    else f'Deployment "{name}" is progressing.'
                )
                cond = U.new_condition("Progressing", "True", "ReplicaSetUpdated", msg, self._now())
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    U.remove_condition(status, "Progressing")
                U.set_condition(status, cond)
            elif self._timed_out(d, status):
                msg = (
                    f'ReplicaSet "{rs_name}" has timed out progressing.'
                    if rs_name
                    else f'Deployment "{name}" has timed out progressing.'
                )
                U.set_condition(
                    status,
                    U.new_condition("Progressing", "False", "ProgressDeadlineExceeded", msg, self._now()),
                )
        failures = _replica_failures(all_rss, new)
        if failures:
            U.set_condition(status, failures[0])
        else:
            U.remove_condition(status, "ReplicaFailure")
        if status == old:
            self._requeue_stuck(d, status)
            return
        self.write_status(self.primary, d, status)

    def _timed_out(self, d: Obj, status: Obj) -> bool:
        cond = U.get_condition(status, "Progressing")
        if cond is None or cond.get("reason") == "NewReplicaSetAvailable":
            return False
        if cond.get("reason") == "ProgressDeadlineExceeded":
            return True
        since = parse_time(cond.get("lastUpdateTime"))
        if since is None:
            return False
        return (self.clock.now() - since).total_seconds() > int(d["spec"]["progressDeadlineSeconds"])

    def _requeue_stuck(self, d: Obj, status: Obj) -> None:
        """requeueStuckDeployment: look again when the progress deadline would pass."""
        cond = U.get_condition(d.get("status") or {}, "Progressing")
        if not U.has_progress_deadline(d) or cond is None:
            return
        if _complete(d, status) or cond.get("reason") == "ProgressDeadlineExceeded":
            return
        since = parse_time(cond.get("lastUpdateTime"))
        if since is None:
            return
        after = (since - self.clock.now()).total_seconds() + int(d["spec"]["progressDeadlineSeconds"])
        key = (d["metadata"].get("namespace", ""), d["metadata"]["name"])
        self.enqueue_after(key, max(after, 0.0) + (1.0 if after >= 1 else 0.0))

    def _write_deployment_status(self, d: Obj) -> Obj:
        """The real controller's UpdateStatus(d): its annotations (the revision) and its status. `d`
        takes the written metadata, so later writes of this sync do not conflict with this one."""
        current = self.get(self.primary, d["metadata"].get("namespace", ""), d["metadata"]["name"])
        if current is None or current["metadata"]["uid"] != d["metadata"]["uid"]:
            raise StatusError(409, "Conflict", "the deployment changed")
        # the status strategy of Deployments takes the annotations sent: one write, no new generation
        current = {**current, "metadata": {**current["metadata"], "annotations": U.annotations_of(d)}}
        written = self.write_status(self.primary, current, d.get("status") or {})
        d["metadata"] = copy.deepcopy(written["metadata"])
        return d

    def _now(self) -> str:
        return rfc3339(self.clock.now())


def _complete(d: Obj, status: Obj) -> bool:
    """DeploymentComplete."""
    want = U.replicas(d)
    return (
        int(status.get("updatedReplicas", 0)) == want
        and int(status.get("replicas", 0)) == want
        and int(status.get("availableReplicas", 0)) == want
        and int(status.get("observedGeneration", 0)) >= d["metadata"].get("generation", 1)
    )


def _progressing(old: Obj, new: Obj) -> bool:
    """DeploymentProgressing: more updated, fewer old, more ready or more available replicas."""

    def n(status: Obj, key: str) -> int:
        return int(status.get(key, 0) or 0)

    return (
        n(new, "updatedReplicas") > n(old, "updatedReplicas")
        or n(new, "replicas") - n(new, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
        or n(new, "readyReplicas") > n(old, "readyReplicas")
        or n(new, "availableReplicas") > n(old, "availableReplicas")
    )


def _terminating(rss: list[Obj]) -> int | None:
    """GetTerminatingReplicaCountForReplicaSets: unknown (None) while a synced ReplicaSet has not
    reported it."""
    total = 0
    for rs in rss:
        status = rs.get("status") or {}
        if "terminatingReplicas" not in status:
            if int(status.get("observedGeneration", 0)) == 0:
                continue
            return None
        total += int(status["terminatingReplicas"])
    return total


def _replica_failures(all_rss: Sequence[Obj | None], new: Obj | None) -> list[Obj]:
    def of(rs: Obj) -> list[Obj]:
        return [
            {
                "type": c["type"],
                "status": c.get("status"),
                "lastUpdateTime": c.get("lastTransitionTime"),
                "lastTransitionTime": c.get("lastTransitionTime"),
                "reason": c.get("reason"),
                "message": c.get("message"),
            }
            for c in (rs.get("status") or {}).get("conditions") or []
            if c.get("type") == "ReplicaFailure"
        ]

    if new is not None and of(new):
        return of(new)
    return [c for rs in all_rss if rs is not None for c in of(rs)]


def _rollback_to(d: Obj) -> int | None:
    value = U.annotations_of(d).get(U.ROLLBACK_TO)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _set_min_ready(rs: Obj, seconds: int) -> None:
    if seconds:
        rs["spec"]["minReadySeconds"] = seconds
    else:
        rs["spec"].pop("minReadySeconds", None)


def _replica_set_name(deployment: str, h: str) -> str:
    """generateReplicaSetName: the Deployment's name cut so the whole stays a DNS subdomain."""
    room = _DNS1123_SUBDOMAIN_MAX - 1 - len(h)
    if len(deployment) > room > 0:
        deployment = deployment[:room]
    return f"{deployment}-{h}"


def owner_keys_of(obj: Obj, kind: str) -> Iterable[Key]:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kind:
            yield (obj["metadata"].get("namespace", ""), str(ref.get("name", "")))


def fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas (kept for callers of the old name)."""
    return U.resolve_fenceposts(d)
