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

ISSUE_36: dict[tuple[str, str], str] = {
    ("*", ".objects.events*"): "issue 36: the simulated controllers record Events as the real ones do",
}

FOUND: dict[tuple[str, str], str] = {
    ("daemonset/*", "*"): "the cluster's kwok leaves the DaemonSet Pods on a scenario's own nodes Pending "
    "(bound, never started; its nodes now get kwok's default resources, so they are scheduled), where "
    "the emulator's kubelet runs them as kwok's default stages would",
    (
        "job/fail-indexed-backoff-per-index",
        "*",
    ): "backoffLimitPerIndex (the emulator's Job controller does not)",
    (
        "statefulset/claims-*",
        "*",
    ): "the PersistentVolume binder (a claim binds to the volume that names it) and "
    "the scheduler's wait for unbound claims: the emulator runs the Pod, its claim stays Pending",
    ("deployment/crashing-pods", "*.conditions.Progressing.*"): "a Deployment whose Pods never become "
    "available is still progressing (ReplicaSetUpdated) until its deadline; the emulator says "
    "NewReplicaSetAvailable",
    ("endpointslice/*", "*.metadata.annotations: *last-change-trigger-time*"): "whether the last write "
    "of a slice or an Endpoints carries endpoints.kubernetes.io/last-change-trigger-time depends on "
    "which changes one sync saw together (a Pod's Ready transition and its deletion, in one sync or "
    "two): the emulator's kubelet and controllers coalesce them otherwise than kwok and the real ones",
    (
        "endpointslice/not-ready-pod",
        "*.spec.publishNotReadyAddresses: cluster lacks it, emulator has false",
    ): "a built-in's false bool with omitempty is dropped by Go's encoding (the emulator stores it)",
}

DELIBERATE: dict[tuple[str, str], str] = {
    ("deployment/update-rolling*", ".objects.replicasets*.*eneration: *"): "timing, not behaviour: how "
    "many scaling steps a rolling update takes (each one a new ReplicaSet generation) depends on when "
    "each Pod turns ready, which differs between runs on either side",
    ("disruption/drain-*", ".records.kubectl drain: *"): "the emulator's kubelet stops containers at once "
    "(stop_seconds); a real one, and kwok, wait out the grace period of a shell that ignores SIGTERM as "
    "PID 1, so the cluster's 15 s drain can time out",
    ("deployment/rollout-undo*", "*"): "its template is busybox without a command: a kubelet's container "
    "(and the emulator's) exits at once and crash-loops, so the rollout never completes; kwok runs it",
    ("events/node-name-preset", "*.PodScheduled: cluster lacks it*"): "a kubelet writes PodScheduled=True "
    "for a Pod that names its node (generateAPIPodStatus), as the emulator's does; kwok writes none",
}


def reason_for(scenario: str, difference: str) -> str | None:
    for table, label in ((DELIBERATE, "deliberate"), (ISSUE_36, "fidelity"), (FOUND, "found")):
        for (name, what), reason in table.items():
            if fnmatch.fnmatchcase(scenario, name) and fnmatch.fnmatchcase(difference, what):
                return f"{label}: {reason}"
    return None
