"""The Job controller: runs Pods of the template until `completions` succeed (or, without completions,
one does), at most `parallelism` at a time; fails the Job past `backoffLimit` or
`activeDeadlineSeconds`; the TTL-after-finished controller deletes finished Jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref, set_condition
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    pass

INDEX = "batch.kubernetes.io/job-completion-index"
BACKOFF_MAX = 360.0  # the real controller's cap (6 min) on the delay before replacing a failed pod


def finished(job: Obj) -> str | None:
    """ "Complete" or "Failed" once the Job has finished."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def _restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    statuses += (pod.get("status") or {}).get("initContainerStatuses") or []
    return sum(int(cs.get("restartCount") or 0) for cs in statuses)


class JobController(SimulatedController):
    primary = ("batch", "v1", "jobs")
    owns = ("", "pods")
    kind = "Job"

    def __init__(self, backoff_seconds: float = 0.1) -> None:
        super().__init__()
        # the delay before a failed pod is replaced, doubled per failure (the real one starts at 10 s)
        self.backoff_seconds = backoff_seconds

    def reconcile(self, namespace: str, name: str) -> None:
        job = self.live(namespace, name)
        if job is None:
            return
        key = (namespace, name)
        spec = job.get("spec") or {}
        status: Obj = dict(job.get("status") or {})
        now = self.clock.now()
        stamp = rfc3339(now)
        done = finished(job)
        if done:
            self._expire(job, key)
            return
        pods = self.owned(P.PODS, job)
        active = [p for p in pods if P.is_active(p)]
        # a pod that ended because it was deleted (suspend, scale, failure) is not a result
        ended = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        succeeded = [p for p in ended if (p.get("status") or {}).get("phase") == "Succeeded"]
        failed = [p for p in ended if (p.get("status") or {}).get("phase") == "Failed"]
        terminating = [p for p in pods if p["metadata"].get("deletionTimestamp") and not P.is_terminal(p)]
        indexed = spec.get("completionMode") == "Indexed"
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1)
        backoff_limit = int(spec.get("backoffLimit", 6))
        suspended = bool(spec.get("suspend"))
        conds: list[Obj] = list(status.get("conditions") or [])
        if not suspended and not status.get("startTime"):
            status["startTime"] = stamp
        n_succeeded = len({_index(p) for p in succeeded}) if indexed else len(succeeded)

        failure: tuple[str, str] | None = None
        if len(failed) > backoff_limit or (
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
        if failure is None and isinstance(deadline, int) and started is not None and not suspended:
            left = (started - now).total_seconds() + deadline
            if left <= 0:
                failure = ("DeadlineExceeded", "Job was active longer than specified deadline")
            else:
                self.enqueue_after(key, left)

        complete = (
            n_succeeded >= int(completions) if completions is not None else bool(succeeded) and not active
        )
        if failure is not None:
            for p in active:
                self.delete(P.PODS, p)
            reason, message = failure
            for typ in ("FailureTarget", "Failed"):
                conds = set_condition(conds, _cond(typ, reason, message, stamp))
            active = []
        elif complete:
            for typ in ("SuccessCriteriaMet", "Complete"):
                conds = set_condition(
                    conds,
                    _cond(typ, "CompletionsReached", "Reached expected number of succeeded pods", stamp),
                )
            status["completionTime"] = stamp
        elif suspended:
            for p in active:
                self.delete(P.PODS, p)
            active = []
            conds = set_condition(conds, _cond("Suspended", "JobSuspended", "Job suspended", stamp))
        else:
            if any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conds):
                conds = set_condition(
                    conds, {**_cond("Suspended", "JobResumed", "Job resumed", stamp), "status": "False"}
                )
            active += self._start_pods(job, active, succeeded, failed, parallelism, completions, indexed, key)

        status["active"] = len(active)
        status["succeeded"] = len(succeeded)
        status["failed"] = len(failed)
        status["ready"] = sum(1 for p in active if P.is_ready(p))
        status["terminating"] = len(terminating)
        status["uncountedTerminatedPods"] = {}
        if indexed:
            status["completedIndexes"] = _ranges(sorted({_index(p) for p in succeeded}))
        for k in ("active", "succeeded", "failed"):
            if not status[k]:
                del status[k]
        if conds:
            status["conditions"] = conds
        self.write_status(self.primary, job, status)
        if failure is not None or complete:
            current = self.get(self.primary, namespace, name)
            if current is not None:
                self._expire(current, key)

    def _start_pods(
        self,
        job: Obj,
        active: list[Obj],
        succeeded: list[Obj],
        failed: list[Obj],
        parallelism: int,
        completions: Any,
        indexed: bool,
        key: Key,
    ) -> list[Obj]:
        want = parallelism
        if completions is not None:
            done = len({_index(p) for p in succeeded}) if indexed else len(succeeded)
            want = min(parallelism, int(completions) - done)
        missing = want - len(active)
        if missing <= 0:
            return []
        if failed:  # replace failed pods after an exponential back-off, counted from the last failure
            last = max((_finished_at(p) for p in failed), default=None)
            delay = min(self.backoff_seconds * 2 ** (len(failed) - 1), BACKOFF_MAX)
            if last is not None:
                left = (last - self.clock.now()).total_seconds() + delay
                if left > 0:
                    self.enqueue_after(key, left)
                    return []
        ref = new_owner_ref(job)
        name = job["metadata"]["name"]
        template = (job.get("spec") or {}).get("template")
        started = []
        taken = {_index(p) for p in active} | {_index(p) for p in succeeded}
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
                _completion_index_env(pod["spec"])
            else:
                pod = P.from_template(template, ref, generate_name=f"{name}-")
            started.append(self.create(P.PODS, job["metadata"].get("namespace", ""), pod))
        return started

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


def _completion_index_env(spec: Obj) -> None:
    """JOB_COMPLETION_INDEX in every (init) container that lacks it, read from the Pod's index label
    (the Job controller's addCompletionIndexEnvVariables)."""
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        env = c.setdefault("env", [])
        if not any(v.get("name") == "JOB_COMPLETION_INDEX" for v in env):
            env.append(
                {
                    "name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX}']"}},
                }
            )


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
