"""Differences between the emulator and the cluster the workload corpus accepts, each with its reason
(docs/envtest.md, "The workload corpus"): `(scenario pattern, difference pattern) -> reason`, both
fnmatch patterns over the scenario's name and one line of its report (`path: what`; write `*` where
the path has an index, `[` opens a character class).

`FIDELITY`: the emulator differs and should not. `ISSUE_36` are the items of issue 36 NAME=fidelity is
fixing on branch h-fidelity; `FOUND` are what this corpus found beyond them, each small one fixed
where it was found (tests/envtest), these left for the next round. Shrink both as fixes land; never
grow them silently. `DELIBERATE`: the emulator differs on purpose, or the cluster is not what a kind
cluster would be (kwok plays the kubelet; see docs/envtest.md, "Cluster mode").
"""

from __future__ import annotations

import fnmatch

_SA = "issue 36: ServiceAccount admission (serviceAccount, the kube-api-access-* token volume and mounts)"
ISSUE_36: dict[tuple[str, str], str] = {
    ("*", ".objects.pods*.spec.serviceAccount: emulator lacks it*"): _SA,
    ("*", ".objects.pods*.spec.volumes: emulator lacks it*kube-api-access-*"): _SA,
    ("*", ".objects.pods*.spec.*ontainers*.volumeMounts: emulator lacks it*serviceaccount*"): _SA,
    ("serviceaccount/missing-account", "*"): _SA + ": a Pod naming a missing account is refused (403)",
    (
        "serviceaccount/root-ca*",
        "*",
    ): "issue 36: the simulated controllers publish each namespace's kube-root-ca.crt",
    ("namespace/new", "*"): "issue 36: the simulated controllers publish each namespace's kube-root-ca.crt",
    ("*", ".objects.events*"): "issue 36: the simulated controllers record Events as the real ones do",
    ("qos/*", ".objects.pods*.status.qosClass: *"): "issue 36: status.qosClass as qos.GetPodQOS computes it",
    ("disruption/*", "*"): "issue 36: cordon and drain (the scheduler skips unschedulable nodes, the node "
    "lifecycle controller taints them), the disruption controller's PodDisruptionBudget status, the "
    "evictions it refuses",
    ("deployment/rollout-undo*", "*"): "issue 36: rollout undo re-adopts an old ReplicaSet: its revision is "
    "renumbered, revision-history kept (deployment controller's sync.go/rollback.go)",
}

FOUND: dict[tuple[str, str], str] = {
    ("daemonset/*", "*"): "the emulator's DaemonSet controller ignores taints and its kubelet runs Pods on "
    "its own node only: a DaemonSet wants Pods on every scenario's tainted nodes, which stay Pending",
    (
        "gc/dangling-owner",
        "*",
    ): "the emulator's garbage collector keeps a dependent whose owner does not exist",
    ("gc/owner-with-other-uid", "*"): "the emulator's garbage collector matches owners by name, not uid",
    ("namespace/delete-held-by-finalizer", "*"): "the emulator's namespace controller writes no "
    "NamespaceDeletion*/NamespaceContentRemaining/NamespaceFinalizersRemaining conditions",
    ("replicaset/adopt-orphan-pod", "*"): "the emulator's ReplicaSets do not adopt matching orphan Pods",
    ("replicaset/release-relabelled-pod", "*"): "the emulator's ReplicaSets do not release relabelled Pods",
    ("replicaset/completing-pod-restarts", "*CrashLoopBackOff*"): "a container of a restartPolicy Always "
    "Pod that exits 0 waits in CrashLoopBackOff (the kubelet's back-off knows no exit code); the emulator "
    "says Completed",
    ("*job*", ".objects.pods*.metadata.finalizers: emulator lacks it*job-tracking*"): "the Job controller's "
    "batch.kubernetes.io/job-tracking finalizer on the Pods it has not counted yet",
    (
        "job/fail-indexed-backoff-per-index",
        "*",
    ): "backoffLimitPerIndex (the emulator's Job controller does not)",
    ("job/pod-failure-policy-*", "*"): "podFailurePolicy (the emulator's Job controller does not)",
    ("job/success-policy", "*"): "successPolicy (the emulator's Job controller does not)",
    ("job/work-queue-parallel-2", "*"): "a Job with parallelism and no completions stops starting Pods once "
    "one succeeded; the emulator's keeps starting them",
    (
        "job/active-deadline",
        ".objects.jobs*.status.failed: *",
    ): "a Job's Pods deleted past its deadline count as failed",
    ("job/fail-on-failure-backoff-1", ".objects.jobs*.status.failed: *"): "a Job's OnFailure Pod deleted "
    "past backoffLimit counts as failed",
    ("job/suspend-running", ".objects.jobs*.status.startTime: *"): "suspending a Job clears its startTime",
    ("job/*", '.objects.jobs*.status.completedIndexes: cluster lacks it, emulator has ""'): "an Indexed "
    "Job with no index completed has no completedIndexes (omitempty)",
    (
        "statefulset/ordinals-start-5",
        "*",
    ): "spec.ordinals.start (the emulator's StatefulSet controller does not)",
    (
        "statefulset/claims-*",
        "*",
    ): "the PersistentVolume binder (a claim binds to the volume that names it) and "
    "the scheduler's wait for unbound claims: the emulator runs the Pod, its claim stays Pending",
    ("deployment/update-labels-only", "*"): "a change of a Deployment's annotations bumps its generation "
    "(the strategy) and the controller copies them to the ReplicaSet",
    ("deployment/*recreate*", "*deployment.kubernetes.io/max-replicas: *"): "max-replicas is spec.replicas "
    "plus maxSurge, and Recreate has no surge",
    ("events/failed-scheduling-*", "*"): "the emulator's scheduler binds every Pod to its node: no filter "
    "(nodeSelector, resources), no PodScheduled=False, no FailedScheduling",
    ("events/node-name-preset", "*.PodScheduled: cluster lacks it*"): "a Pod that names its node is never "
    "the scheduler's: no PodScheduled condition (the emulator's kubelet writes one)",
    ("deployment/crashing-pods", "*.conditions.Progressing.*"): "a Deployment whose Pods never become "
    "available is still progressing (ReplicaSetUpdated) until its deadline; the emulator says "
    "NewReplicaSetAvailable",
    ("*", ".objects.pods*.status.initContainerStatuses: emulator lacks it*"): "the emulator's kubelet writes "
    "no initContainerStatuses",
    ("qos/guaranteed-pod-level", "*.spec.resources.requests: *"): "pod-level requests default from pod-level "
    "limits and the containers' requests (defaultPodRequests, in PrepareForCreate since 1.37)",
    ("endpointslice/*", ".objects.endpoints*.metadata.labels*"): "the Endpoints controller's labels "
    "(endpoints.kubernetes.io/managed-by, the Service's labels, service.kubernetes.io/headless)",
    ("endpointslice/*", "*.metadata.annotations: emulator lacks it*last-change-trigger-time*"): "the "
    "Endpoints and EndpointSlice controllers' endpoints.kubernetes.io/last-change-trigger-time",
    ("endpointslice/*", ".objects.endpointslices*.metadata.generation: emulator lacks it*"): "an "
    "EndpointSlice has a generation (its strategy sets one)",
    ("endpointslice/headless", "*service.kubernetes.io/headless: emulator lacks it*"): "the EndpointSlice "
    "controller labels a headless Service's slices service.kubernetes.io/headless",
    ("endpointslice/publish-not-ready", "*.conditions.serving: *"): "an endpoint's serving condition is the "
    "Pod's readiness even when the Service publishes not-ready addresses (ready is forced, serving is not)",
    ("endpointslice/service-deleted", ".objects.endpoints: *"): "the Endpoints controller deletes a deleted "
    "Service's Endpoints",
    (
        "endpointslice/not-ready-pod",
        "*.spec.publishNotReadyAddresses: cluster lacks it, emulator has false",
    ): "a built-in's false bool with omitempty is dropped by Go's encoding (the emulator stores it)",
}

DELIBERATE: dict[tuple[str, str], str] = {}


def reason_for(scenario: str, difference: str) -> str | None:
    for table, label in ((DELIBERATE, "deliberate"), (ISSUE_36, "fidelity"), (FOUND, "found")):
        for (name, what), reason in table.items():
            if fnmatch.fnmatchcase(scenario, name) and fnmatch.fnmatchcase(difference, what):
                return f"{label}: {reason}"
    return None
