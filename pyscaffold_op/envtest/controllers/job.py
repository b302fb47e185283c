"""The Job controller: runs Pods of the template until `completions` succeed (or, without completions,
one does), at most `parallelism` at a time; fails the Job past `backoffLimit` or
`activeDeadlineSeconds`; the TTL-after-finished controller deletes finished Jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref, set_condition
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    pass

INDEX = "batch.kubernetes.io/job-completion-index"
FINALIZER = "batch.kubernetes.io/job-tracking"  # a Pod's until the Job controller has counted it
BACKOFF_MAX = 360.0  # the real controller's cap (6 min) on the delay before replacing a failed pod


def finished(job: Obj) -> str | None:
    """ "Complete" or "Failed" once the Job has finished."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def _match_failure_policy(policy: Obj, pod: Obj) -> tuple[str | None, bool]:
    """matchPodFailurePolicy: the FailJob message (None for other actions or no match) and whether
    the failure counts (an Ignore rule's does not)."""
    status = pod.get("status") or {}
    meta = pod["metadata"]
    for index, rule in enumerate(policy.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        on_codes = rule.get("onExitCodes")
        if isinstance(on_codes, dict):
            matched = _match_exit_codes(status, on_codes)
            if matched is None:
                continue
            if action == "FailJob":
                name, code = matched
                return (
                    f"Container {name} for pod {meta.get('namespace', '')}/{meta['name']} failed with "
                    f"exit code {code} matching FailJob rule at index {index}",
                    True,
                )
        elif rule.get("onPodConditions") is not None:
            patterns = rule.get("onPodConditions") or []
            cond = next(
                (
                    c
                    for c in status.get("conditions") or []
                    if any(
                        c.get("type") == p.get("type") and c.get("status") == p.get("status", "True")
                        for p in patterns
                    )
                ),
                None,
            )
            if cond is None:
                continue
            if action == "FailJob":
                return (
                    f"Pod {meta.get('namespace', '')}/{meta['name']} has condition {cond.get('type')} "
                    f"matching FailJob rule at index {index}",
                    True,
                )
        else:
            continue
        return None, action != "Ignore"
    return None, True


def _match_exit_codes(status: Obj, requirement: Obj) -> tuple[str, int] | None:
    """matchOnExitCodes: a terminated container (then an init container) with a non-zero exit code
    In or NotIn the values."""
    values = {int(v) for v in requirement.get("values") or []}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or []:
            term = (cs.get("state") or {}).get("terminated")
            if not isinstance(term, dict):
                continue
            if requirement.get("containerName") not in (None, cs.get("name")):
                continue
            code = int(term.get("exitCode", 0))
            if code == 0:
                continue
            if (code in values) == (requirement.get("operator", "In") == "In"):
                return str(cs.get("name", "")), code
    return None


def _match_success_policy(policy: Obj, completions: int, succeeded: set[int]) -> str | None:
    """matchSuccessPolicy: "Matched rules at index N" for the first rule the succeeded indexes meet."""
    if not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = {i for i in _parse_ranges(rule["succeededIndexes"]) if i < completions}
            if not required:
                continue
            contains = len(required & succeeded)
            if contains == len(required) or (count is not None and contains >= int(count)):
                return f"Matched rules at index {index}"
        elif count is not None and len(succeeded) >= int(count):
            return f"Matched rules at index {index}"
    return None


def _true_cond(conds: list[Obj], typ: str) -> Obj | None:
    return next((c for c in conds if c.get("type") == typ and c.get("status") == "True"), None)


def _restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    statuses += (pod.get("status") or {}).get("initContainerStatuses") or []
    return sum(int(cs.get("restartCount") or 0) for cs in statuses)


class JobController(SimulatedController):
    primary = ("batch", "v1", "jobs")
    owns = ("", "pods")
    kind = "Job"
    component = "job-controller"

    def __init__(self, backoff_seconds: float = 0.1) -> None:
        super().__init__()
        # the delay before a failed pod is replaced, doubled per failure (the real one starts at 10 s)
        self.backoff_seconds = backoff_seconds

    def reconcile(self, namespace: str, name: str) -> None:
        job = self.get(self.primary, namespace, name)
        if job is None:
            return
        key = (namespace, name)
        pods = self.owned(P.PODS, job)
        if job["metadata"].get("deletionTimestamp") or finished(job):
            # nothing more to count: the Pods go with the tracking finalizer removed
            for pod in pods:
                self._release(pod)
            if not job["metadata"].get("deletionTimestamp"):
                self._expire(job, key)
            return
        spec = job.get("spec") or {}
        status: Obj = dict(job.get("status") or {})
        now = self.clock.now()
        stamp = rfc3339(now)
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1)
        backoff_limit = int(spec.get("backoffLimit", 6))
        suspended = bool(spec.get("suspend"))
        replace_failed_only = spec.get("podReplacementPolicy") == "Failed"
        policy = spec.get("podFailurePolicy") if isinstance(spec.get("podFailurePolicy"), dict) else None
        # trackJobStatusAndRemoveFinalizers: a finished Pod still holding the tracking finalizer is
        # counted once into the status, then let go; the counters never go down
        completed = _parse_ranges(status.get("completedIndexes", ""))
        for pod in pods:
            if FINALIZER not in (pod["metadata"].get("finalizers") or []):
                continue
            phase = (pod.get("status") or {}).get("phase")
            failed_pod = phase == "Failed" or (
                not replace_failed_only and pod["metadata"].get("deletionTimestamp") and phase != "Succeeded"
            )
            if phase == "Succeeded":
                if indexed:
                    ix = _index(pod)
                    if 0 <= ix < int(completions or 0) and ix not in completed:
                        completed.add(ix)
                        status["succeeded"] = int(status.get("succeeded", 0)) + 1
                else:
                    status["succeeded"] = int(status.get("succeeded", 0)) + 1
            elif failed_pod:
                if policy is None or _match_failure_policy(policy, pod)[1]:  # an Ignore rule: not counted
                    status["failed"] = int(status.get("failed", 0)) + 1
            else:
                continue
            self._release(pod)
        pods = self.owned(P.PODS, job)
        active = [p for p in pods if P.is_active(p)]
        terminating = [p for p in pods if p["metadata"].get("deletionTimestamp") and not P.is_terminal(p)]
        succeeded_pods = [p for p in pods if (p.get("status") or {}).get("phase") == "Succeeded"]
        n_failed = int(status.get("failed", 0))
        conds: list[Obj] = list(status.get("conditions") or [])
        if suspended:
            status.pop("startTime", None)  # a suspended Job starts again from its resume
        elif not status.get("startTime"):
            status["startTime"] = stamp
        n_succeeded = len(completed) if indexed else int(status.get("succeeded", 0))

        # a FailureTarget or SuccessCriteriaMet condition already written decides the outcome; the
        # Failed or Complete condition follows once no Pod is terminating (enactJobFinished)
        failure: tuple[str, str] | None = None
        met = _true_cond(conds, "SuccessCriteriaMet")
        target = _true_cond(conds, "FailureTarget")
        fail_job = None
        if met is None and target is None and policy is not None:
            # getFailJobMessage: the first failed Pod matching a FailJob rule
            for pod in pods:
                phase = (pod.get("status") or {}).get("phase")
                if phase == "Failed" or (
                    not replace_failed_only
                    and pod["metadata"].get("deletionTimestamp")
                    and phase != "Succeeded"
                ):
                    fail_job = _match_failure_policy(policy, pod)[0]
                    if fail_job is not None:
                        break
        if met is not None:
            pass  # the success already decided prevails
        elif target is not None:
            failure = (str(target.get("reason", "")), str(target.get("message", "")))
        elif fail_job is not None:
            failure = ("PodFailurePolicy", fail_job)
        elif n_failed > backoff_limit or (
            spec.get("template", {}).get("spec", {}).get("restartPolicy") == "OnFailure"
            and (
                sum(_restarts(p) for p in active) >= backoff_limit
                if backoff_limit
                else any(map(_restarts, active))
            )
        ):
            failure = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        deadline = spec.get("activeDeadlineSeconds")
        started = parse_time(status.get("startTime"))
        if (
            failure is None
            and met is None
            and isinstance(deadline, int)
            and started is not None
            and not suspended
        ):
            left = (started - now).total_seconds() + deadline
            if left <= 0:
                failure = ("DeadlineExceeded", "Job was active longer than specified deadline")
            else:
                self.enqueue_after(key, left)

        success: tuple[str, str] | None = None
        if met is not None:
            success = (str(met.get("reason", "")), str(met.get("message", "")))
        elif failure is None and indexed and isinstance(spec.get("successPolicy"), dict):
            matched = _match_success_policy(spec["successPolicy"], int(completions or 0), completed)
            if matched is not None:
                success = ("SuccessPolicy", matched)
        complete = success is not None or (
            n_succeeded >= int(completions) if completions is not None else n_succeeded > 0 and not active
        )
        was_suspended = any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conds)
        done = False
        if failure is not None or complete:
            # deleteActivePods keeps the tracking finalizer: a Pod that had not finished is counted
            # (failed, unless the Job succeeded) as it goes
            self._delete_pods(job, active, release=False)
            if failure is not None:
                status["failed"] = n_failed + sum(
                    1 for p in active if FINALIZER in (p["metadata"].get("finalizers") or [])
                )
            for pod in active:
                self._release(pod)
            terminating += active
            active = []
            if failure is not None:
                reason, message = failure
                conds = set_condition(conds, _cond("FailureTarget", reason, message, stamp))
                if not terminating:
                    done = True
                    conds = set_condition(conds, _cond("Failed", reason, message, stamp))
                    self.record(job, WARNING, reason, message)
            else:
                reason, message = success or (
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                )
                conds = set_condition(conds, _cond("SuccessCriteriaMet", reason, message, stamp))
                if not terminating:
                    done = True
                    conds = set_condition(conds, _cond("Complete", reason, message, stamp))
                    status["completionTime"] = stamp
                    if completions is not None and n_succeeded > int(completions):
                        self.record(
                            job,
                            WARNING,
                            "TooManySucceededPods",
                            "Too many succeeded pods running after completion count reached",
                        )
                    self.record(job, NORMAL, "Completed", "Job completed")
        elif suspended:
            self._delete_pods(job, active)
            terminating += active
            active = []
            conds = set_condition(conds, _cond("Suspended", "JobSuspended", "Job suspended", stamp))
            if not was_suspended:
                self.record(job, NORMAL, "Suspended", "Job suspended")
        else:
            if was_suspended:
                conds = set_condition(
                    conds, {**_cond("Suspended", "JobResumed", "Job resumed", stamp), "status": "False"}
                )
                self.record(job, NORMAL, "Resumed", "Job resumed")
            if completions is not None or (not succeeded_pods and not n_succeeded):
                # a work queue (no completions) starts no Pod once one has succeeded
                active += self._start_pods(
                    job, active, succeeded_pods, n_failed, parallelism, completions, indexed, key, completed
                )

        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if P.is_ready(p))
        status["terminating"] = len(terminating)
        status["uncountedTerminatedPods"] = {}
        if indexed and completed:
            status["completedIndexes"] = _ranges(sorted(completed))
        else:
            status.pop("completedIndexes", None)
        for k in ("active", "succeeded", "failed"):
            if not status.get(k):
                status.pop(k, None)
        if conds:
            status["conditions"] = conds
        self.write_status(self.primary, job, status)
        if done:
            current = self.get(self.primary, namespace, name)
            if current is not None:
                self._expire(current, key)

    def _release(self, pod: Obj) -> None:
        """Remove the tracking finalizer (the Pod has been counted or the Job is done)."""
        if FINALIZER not in (pod["metadata"].get("finalizers") or []):
            return
        current = self.get(P.PODS, pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        if current is None or current["metadata"]["uid"] != pod["metadata"]["uid"]:
            return
        pod = current
        finalizers = pod["metadata"].get("finalizers") or []
        if FINALIZER not in finalizers:
            return
        kept = [f for f in finalizers if f != FINALIZER]
        meta = {**pod["metadata"], "finalizers": kept}
        if not kept:
            meta.pop("finalizers")
        try:
            self.update(P.PODS, {**pod, "metadata": meta})
        except StatusError as err:
            if err.code != 404:
                raise

    def _start_pods(
        self,
        job: Obj,
        active: list[Obj],
        succeeded: list[Obj],
        failed: int,
        parallelism: int,
        completions: Any,
        indexed: bool,
        key: Key,
        completed: set[int],
    ) -> list[Obj]:
        want = parallelism
        if completions is not None:
            done = len(completed) if indexed else int((job.get("status") or {}).get("succeeded", 0))
            done = max(done, len(succeeded) if not indexed else len(completed))
            want = min(parallelism, int(completions) - done)
        missing = want - len(active)
        if (job.get("spec") or {}).get("podReplacementPolicy") == "Failed":
            # a Pod being deleted is replaced only once it has failed
            missing -= sum(
                1
                for p in self.owned(P.PODS, job)
                if p["metadata"].get("deletionTimestamp") and not P.is_terminal(p)
            )
        if missing <= 0:
            return []
        failed_pods = [p for p in self.owned(P.PODS, job) if (p.get("status") or {}).get("phase") == "Failed"]
        if failed:  # replace failed pods after an exponential back-off, counted from the last failure
            last = max((t for t in (_finished_at(p) for p in failed_pods) if t is not None), default=None)
            delay = min(self.backoff_seconds * 2 ** (failed - 1), BACKOFF_MAX)
            if last is not None:
                left = (last - self.clock.now()).total_seconds() + delay
                if left > 0:
                    self.enqueue_after(key, left)
                    return []
        ref = new_owner_ref(job)
        name = job["metadata"]["name"]
        template = (job.get("spec") or {}).get("template")
        started = []
        taken = {_index(p) for p in active} | {_index(p) for p in succeeded} | completed
        free = iter(i for i in range(int(completions or 0)) if i not in taken) if indexed else None
        for _ in range(missing):
            if free is not None:
                index = next(free, None)
                if index is None:
                    break
                pod = P.from_template(template, ref, generate_name=f"{name}-{index}-")
                pod["metadata"].setdefault("annotations", {})[INDEX] = str(index)
                pod["metadata"].setdefault("labels", {})[INDEX] = str(index)
                pod["spec"]["hostname"] = f"{name}-{index}"
                _add_index_env(pod["spec"])
            else:
                pod = P.from_template(template, ref, generate_name=f"{name}-")
            pod["metadata"]["finalizers"] = [*(pod["metadata"].get("finalizers") or []), FINALIZER]
            created = self.create(P.PODS, job["metadata"].get("namespace", ""), pod)
            self.record(job, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
            started.append(created)
        return started

    def _delete_pods(self, job: Obj, pods: list[Obj], release: bool = True) -> None:
        """deleteJobPods (release: the finalizer goes first, the Pod is not counted) or
        deleteActivePods (the caller counts it)."""
        for pod in pods:
            if release:
                self._release(pod)
            self.delete(P.PODS, pod)
            self.record(job, NORMAL, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")

    def _expire(self, job: Obj, key: Key) -> None:
        """ttlSecondsAfterFinished: delete the finished Job (and its Pods) once the TTL has passed."""
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if not isinstance(ttl, int):
            return
        finished_at = None
        for c in (job.get("status") or {}).get("conditions") or []:
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                finished_at = parse_time(c.get("lastTransitionTime"))
        if finished_at is None:
            return
        left = (finished_at - self.clock.now()).total_seconds() + ttl
        if left <= 0:
            self.delete(self.primary, job, propagation="Background")
        else:
            self.enqueue_after(key, left)


def _cond(typ: str, reason: str, message: str, stamp: str) -> Obj:
    return {
        "type": typ,
        "status": "True",
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def _index(pod: Obj) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get(INDEX, -1))
    except ValueError:
        return -1


def _finished_at(pod: Obj) -> Any:
    parsed = [
        parse_time((cs.get("state") or {}).get("terminated", {}).get("finishedAt"))
        for cs in (pod.get("status") or {}).get("containerStatuses") or []
    ]
    times = [t for t in parsed if t is not None]
    return max(times) if times else None


def _add_index_env(spec: Obj) -> None:
    """addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the Pod's index label, in every
    container and init container that has not its own."""
    var = {
        "name": "JOB_COMPLETION_INDEX",
        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.labels['{INDEX}']"}},
    }
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict) and not any(e.get("name") == var["name"] for e in c.get("env") or []):
                c["env"] = [*(c.get("env") or []), var]


def _parse_ranges(text: Any) -> set[int]:
    """completedIndexes back into indexes: "1,3-5" is {1, 3, 4, 5}."""
    out: set[int] = set()
    for part in str(text or "").split(","):
        lo, _, hi = part.partition("-")
        if lo.strip().isdigit():
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _ranges(indexes: list[int]) -> str:
    """completedIndexes: "1,3-5,7"."""
    out: list[str] = []
    i = 0
    while i < len(indexes):
        j = i
        while j + 1 < len(indexes) and indexes[j + 1] == indexes[j] + 1:
            j += 1
        out.append(str(indexes[i]) if i == j else f"{indexes[i]}-{indexes[j]}")
        i = j + 1
    return ",".join(out)
