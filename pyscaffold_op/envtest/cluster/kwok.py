"""kwok's part of cluster mode: its configuration, the Stages that play the kubelet, and the fake Node.

kwok (sigs.k8s.io/kwok) runs no container: a Stage is a selector over a Pod or Node (jq expressions)
and the status it writes next (a Go template, sprig functions included). The Stages here play a
kubelet the way the emulator's `KubeletSimulator` does, so a workload behaves alike on both:

- a Pod bound to a fake node runs at once (Ready, a pod IP from the node's podCIDR);
- how its first container ends is read from its command by `OUTCOME`, the jq twin of the emulator's
  `default_rule`: `run` (no command, `sleep` of 30 s or more, `tail -f`, `while true`, a server in a
  Pod that restarts Always) or an exit code (`exit N`, `false` = 1, other short commands 0);
- an exit with restartPolicy Never (any code) or OnFailure (code 0) ends the Pod Succeeded/Failed, as
  a kubelet does, so Jobs complete; Always (any code) and OnFailure (non-zero) restart the container
  (`CrashLoopBackOff`, restartCount + 1, running again after a kubelet's back-off: 10 s, doubled per
  restart, at most 5 minutes);
- a Pod being deleted has its containers stopped (exit 143, a terminal phase, as kubelets since 1.27
  write) and is then deleted with grace period 0.

What kwok does not do: run containers (no image is pulled, no process starts, `kubectl exec`/`logs`
have nothing to reach), probes, resource accounting beyond the scheduler's, volumes.
"""

from __future__ import annotations

import json
from typing import Any

from pyscaffold_op import yamlio

NODE_NAME = "envtest-node"  # the emulator's kubelet simulator registers a node of this name too
# what the emulator's node has: a laptop-sized kind node (kind reports the host's own figures)
NODE_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
MANAGED = "kwok.x-k8s.io/node"  # kwok's annotation on the nodes it plays ("fake")
# a kubelet's crash loop back-off: 10 s after the first exit, doubled per restart, at most 5 minutes
BACKOFF = '.status.containerStatuses[0].restartCount as $n | "\\([10 * pow(2; $n - 1), 300] | min)s"'
STOP_MS = 50  # the emulator's `stop_seconds`: how long stopping a deleted Pod's containers takes

# -- how a container ends: the jq twin of envtest.controllers.kubelet.default_rule -------------------

OUTCOME = r"""
def sleepsecs:
  if . == "infinity" then 1e9
  else ([capture("^(?<n>[0-9]+(\\.[0-9]+)?)(?<u>[smhd]?)$")] | first) as $m
    | if $m == null then 0 else ($m.n | tonumber) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[$m.u] end
  end;
def script_outcome:
  if test("\\bwhile\\s+(true|:|\\[\\s*1\\s*\\])") or test("\\btail\\s+(-\\w*f)") then "run"
  elif [scan("\\bsleep\\s+(\\S+)") | .[0] | sleepsecs] | any(. >= 30) then "run"
  else [scan("(?:^|[;&|\\s])exit\\s+([0-9]+)") | .[0]] as $codes
    | if ($codes | length) > 0 then (($codes | last | tonumber) % 256 | tostring)
      elif ([splits("\\s+") | select(. != "")] | first) == "false" then "1"
      else "0" end
  end;
["sh", "bash", "ash", "dash", "zsh", "ksh"] as $shells
| ["echo", "true", "false", "sleep", "printf", "exit", "date", "env", "cat", "ls"] as $simple
| .spec as $s
| ($s.containers[0] // {}) as $c
| ((($c.command // []) + ($c.args // [])) | map(tostring)) as $argv
| if ($argv | length) == 0 then "run"
  else ($argv[0] | split("/") | last) as $base
  | ([range(0; $argv | length) | select($argv[.] == "-c")] | first) as $dash_c
  | if ($shells | any(. == $base)) and $dash_c != null then $argv[$dash_c + 1:] | join(" ") | script_outcome
    elif ($shells | any(. == $base)) and ($argv | length) == 1 then "0"
    elif $simple | any(. == $base) then $argv | join(" ") | script_outcome
    elif ($s.restartPolicy // "Always") == "Always" then "run"
    else "0" end
  end
""".strip()

# The exit code of a container that ends non-zero (the selectors chose the stage): the last `exit N`
# of its command, else 1 (`false`).
_EXIT_CODE = (
    "{{ $c0 := index .spec.containers 0 }}"
    "{{ $argv := concat (default list $c0.command) (default list $c0.args) }}"
    '{{ $exits := regexFindAll "(^|[;&|[:space:]])exit[[:space:]]+[0-9]+" (join " " $argv) -1 }}'
    "{{ $code := 1 }}"
    '{{ if $exits }}{{ $code = mod (atoi (regexFind "[0-9]+$" (last $exits))) 256 }}{{ end }}'
)


def _cond(kind: str, status: str, reason: str = "", message: str = "") -> str:
    extra = f", reason: {reason}" if reason else ""
    extra += f", message: {json.dumps(message)}" if message else ""
    return (
        f"- {{type: {kind}, status: {json.dumps(status)}{extra}, lastProbeTime: null, "
        "lastTransitionTime: {{ $now | Quote }}}"
    )


_UNREADY = (
    "containers with unready status: "
    "[{{ range $i, $c := .spec.containers }}{{ if $i }} {{ end }}{{ $c.name }}{{ end }}]"
)


def _container(state: str, *, ready: bool, restarts: str, last_state: str = "{}") -> str:
    return (
        "- name: {{ $c.name | Quote }}\n"
        "  image: {{ $c.image | Quote }}\n"
        '  imageID: {{ printf "%s@sha256:kwok" $c.image | Quote }}\n'
        '  containerID: {{ printf "kwok://%s-%s" $root.metadata.uid $c.name | Quote }}\n'
        f"  ready: {str(ready).lower()}\n"
        f"  started: {str(ready).lower()}\n"
        f"  restartCount: {restarts}\n"
        f"  state: {state}\n"
        f"  lastState: {last_state}\n"
    )


_RUNNING = "{running: {startedAt: {{ $now | Quote }}}}"
# a container's status in the Pod's current status (same index): its restarts and states so far
_ORIGIN = "{{ $o := index $root.status.containerStatuses $i }}"


def _started() -> str:
    """Pending -> Running: every container started and Ready, init containers done (sidecars run)."""
    return (
        "{{ $now := Now }}{{ $root := . }}\n"
        "conditions:\n"
        + "\n".join(
            _cond(k, "True") for k in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
        )
        + "\ncontainerStatuses:\n{{ range $i, $c := .spec.containers }}\n"
        + _container(_RUNNING, ready=True, restarts="0")
        + "{{ end }}\n"
        "{{ with .spec.initContainers }}\ninitContainerStatuses:\n{{ range $i, $c := . }}\n"
        '{{ if eq (default "" $c.restartPolicy) "Always" }}\n'
        + _container(_RUNNING, ready=True, restarts="0")
        + "{{ else }}\n"
        + _container(
            "{terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, "
            "finishedAt: {{ $now | Quote }}}}",
            ready=True,
            restarts="0",
        ).replace("  started: true\n", "  started: false\n")
        + "{{ end }}\n{{ end }}\n{{ end }}\n"
        "{{ $hostIPs := NodeIPsWith .spec.nodeName }}\n"
        "hostIP: {{ index $hostIPs 0 | Quote }}\n"
        "hostIPs:\n{{ range $hostIPs }}\n- ip: {{ . | Quote }}\n{{ end }}\n"
        '{{ $podIPs := PodIPsWith .spec.nodeName (or .spec.hostNetwork false) (or .metadata.uid "") '
        '(or .metadata.name "") (or .metadata.namespace "") }}\n'
        "podIP: {{ index $podIPs 0 | Quote }}\n"
        "podIPs:\n{{ range $podIPs }}\n- ip: {{ . | Quote }}\n{{ end }}\n"
        "phase: Running\n"
        "startTime: {{ $now | Quote }}\n"
    )


def _terminated(code: str, exit_reason: str) -> str:
    return (
        "{terminated: {exitCode: " + code + ", reason: " + exit_reason + ", "
        "startedAt: {{ $o.state.running.startedAt | Quote }}, finishedAt: {{ $now | Quote }}}}"
    )


def _ended(phase: str) -> str:
    """The container exited and the Pod does not restart it: a terminal phase."""
    code = "0" if phase == "Succeeded" else "{{ $code }}"
    reason = "Completed" if phase == "Succeeded" else "Error"
    return (
        "{{ $now := Now }}{{ $root := . }}" + ("" if phase == "Succeeded" else _EXIT_CODE) + "\n"
        "conditions:\n"
        + "\n".join(
            [
                _cond("PodReadyToStartContainers", "False"),
                _cond("Ready", "False", "PodCompleted"),
                _cond("ContainersReady", "False", "PodCompleted"),
            ]
        )
        + "\ncontainerStatuses:\n{{ range $i, $c := .spec.containers }}"
        + _ORIGIN
        + "\n"
        + _container(
            _terminated(code, reason),
            ready=False,
            restarts="{{ $o.restartCount }}",
            last_state="{{ toJson (default dict $o.lastState) }}",
        )
        + "{{ end }}\n"
        f"phase: {phase}\n"
    )


def _crashed(code: str) -> str:
    """The container exited and the kubelet restarts it after a back-off."""
    reason = "Completed" if code == "0" else "Error"
    return (
        "{{ $now := Now }}{{ $root := . }}" + ("" if code == "0" else _EXIT_CODE) + "\n"
        "conditions:\n"
        + "\n".join(
            [
                _cond("Ready", "False", "ContainersNotReady", _UNREADY),
                _cond("ContainersReady", "False", "ContainersNotReady", _UNREADY),
            ]
        )
        + "\ncontainerStatuses:\n{{ range $i, $c := .spec.containers }}"
        + _ORIGIN
        + "\n"
        + _container(
            "{waiting: {reason: CrashLoopBackOff, message: "
            '{{ printf "back-off 10s restarting failed container=%s pod=%s_%s(%s)" $c.name '
            "$root.metadata.name $root.metadata.namespace $root.metadata.uid | Quote }}}}",
            ready=False,
            restarts="{{ add $o.restartCount 1 }}",
            last_state=_terminated("0" if code == "0" else "{{ $code }}", reason),
        )
        + "{{ end }}\n"
    )


def _restarted() -> str:
    """The back-off is over: the container runs again."""
    return (
        "{{ $now := Now }}{{ $root := . }}\n"
        "conditions:\n"
        + "\n".join(_cond(k, "True") for k in ("Ready", "ContainersReady"))
        + "\ncontainerStatuses:\n{{ range $i, $c := .spec.containers }}"
        + _ORIGIN
        + "\n"
        + _container(
            _RUNNING,
            ready=True,
            restarts="{{ $o.restartCount }}",
            last_state="{{ toJson (default dict $o.lastState) }}",
        )
        + "{{ end }}\n"
    )


def _stopped() -> str:
    """A deleted Pod's containers got SIGTERM and exited 143 (those already ended keep their end):
    phase Failed, written before the Pod goes, as kubelets since 1.27 do."""
    return (
        "{{ $now := Now }}{{ $root := . }}\n"
        "conditions:\n"
        + "\n".join(
            [
                _cond("PodReadyToStartContainers", "False"),
                _cond("Ready", "False", "PodCompleted"),
                _cond("ContainersReady", "False", "PodCompleted"),
            ]
        )
        + "\ncontainerStatuses:\n{{ range $i, $c := .spec.containers }}\n"
        "{{ $o := dict }}{{ with $root.status.containerStatuses }}{{ if lt $i (len .) }}"
        "{{ $o = index . $i }}{{ end }}{{ end }}\n"
        + _container(
            '{{ with dig "state" "terminated" "" $o }}{terminated: {{ toJson . }}}{{ else }}'
            "{terminated: {exitCode: 143, reason: Error, "
            'startedAt: {{ dig "state" "running" "startedAt" $now $o | Quote }}, '
            "finishedAt: {{ $now | Quote }}}}{{ end }}",
            ready=False,
            restarts='{{ dig "restartCount" 0 $o }}',
            last_state='{{ toJson (dig "lastState" dict $o) }}',
        )
        + "{{ end }}\n"
        "phase: Failed\n"
    )


# -- the Stages ----------------------------------------------------------------------------------


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


_ALIVE = _expr(".metadata.deletionTimestamp", "DoesNotExist")
_RUNNING_NOW = _expr(".status.containerStatuses.[0].state.running.startedAt", "Exists")


def _stage(
    name: str,
    kind: str,
    exprs: list[dict[str, Any]],
    next_: dict[str, Any],
    delay_ms: int = 0,
    delay_from: str = "",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceRef": {"apiGroup": "v1", "kind": kind},
        "selector": {"matchExpressions": exprs},
        "next": next_,
    }
    if delay_ms or delay_from:
        spec["delay"] = {"durationMilliseconds": delay_ms}
    if delay_from:
        spec["delay"]["durationFrom"] = {"jq": {"expression": delay_from}}
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": name}, "spec": spec}


def _outcome(op: str, *values: str) -> dict[str, Any]:
    """How the first container ends (`OUTCOME`) is, or is not, one of `values`."""
    return _expr(OUTCOME, op, *values)


def _policy(*values: str) -> dict[str, Any]:
    return _expr(".spec.restartPolicy", "In", *values)


def pod_stages() -> list[dict[str, Any]]:
    running = [_ALIVE, _expr(".status.phase", "In", "Running"), _RUNNING_NOW]
    return [
        _stage(
            "pod-start",
            "Pod",
            [_ALIVE, _expr(".status.phase", "In", "Pending"), _expr(".status.startTime", "DoesNotExist")],
            {"statusTemplate": _started()},
        ),
        _stage(
            "pod-succeed",
            "Pod",
            [*running, _policy("Never", "OnFailure"), _outcome("In", "0")],
            {"statusTemplate": _ended("Succeeded")},
            delay_ms=100,
        ),
        _stage(
            "pod-fail",
            "Pod",
            [*running, _policy("Never"), _outcome("NotIn", "0", "run")],
            {"statusTemplate": _ended("Failed")},
            delay_ms=100,
        ),
        _stage(
            "pod-exit-restart",
            "Pod",
            [*running, _policy("Always"), _outcome("In", "0")],
            {"statusTemplate": _crashed("0")},
            delay_ms=100,
        ),
        _stage(
            "pod-crash-restart",
            "Pod",
            [*running, _policy("Always", "OnFailure"), _outcome("NotIn", "0", "run")],
            {"statusTemplate": _crashed("code")},
            delay_ms=100,
        ),
        _stage(
            "pod-back-off-over",
            "Pod",
            [
                _ALIVE,
                _expr(".status.phase", "In", "Running"),
                _expr(".status.containerStatuses.[0].state.waiting.reason", "In", "CrashLoopBackOff"),
            ],
            {"statusTemplate": _restarted()},
            delay_ms=10_000,
            delay_from=BACKOFF,
        ),
        _stage(
            "pod-stop",
            "Pod",
            [
                _expr(".metadata.deletionTimestamp", "Exists"),
                _expr(".status.phase", "In", "Pending", "Running"),
            ],
            {"statusTemplate": _stopped()},
            delay_ms=STOP_MS,
        ),
        _stage(
            "pod-delete",
            "Pod",
            [
                _expr(".metadata.deletionTimestamp", "Exists"),
                _expr(".status.phase", "NotIn", "Pending", "Running"),
            ],
            {"delete": True},
        ),
    ]


_NODE_READY = """{{ $now := Now }}
{{ $since := or .metadata.creationTimestamp $now }}
conditions:
{{ range NodeConditions }}
- lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $since | Quote }}
  message: {{ .message | Quote }}
  reason: {{ .reason | Quote }}
  status: {{ .status | Quote }}
  type: {{ .type | Quote }}
{{ end }}
allocatable:
{{ with .status.allocatable }}
{{ YAML . 1 }}
{{ else }}
  cpu: 1k
  memory: 1Ti
  pods: 1M
{{ end }}
capacity:
{{ with .status.capacity }}
{{ YAML . 1 }}
{{ else }}
  cpu: 1k
  memory: 1Ti
  pods: 1M
{{ end }}
{{ $nodeInfo := .status.nodeInfo }}
{{ $kwok := printf "kwok-%s" Version }}
nodeInfo:
  architecture: {{ or $nodeInfo.architecture "amd64" }}
  bootID: {{ or $nodeInfo.bootID `""` }}
  containerRuntimeVersion: {{ or $nodeInfo.containerRuntimeVersion $kwok }}
  kernelVersion: {{ or $nodeInfo.kernelVersion $kwok }}
  kubeProxyVersion: {{ or $nodeInfo.kubeProxyVersion $kwok }}
  kubeletVersion: {{ or $nodeInfo.kubeletVersion $kwok }}
  machineID: {{ or $nodeInfo.machineID `""` }}
  operatingSystem: {{ or $nodeInfo.operatingSystem "linux" }}
  osImage: {{ or $nodeInfo.osImage `""` }}
  systemUUID: {{ or $nodeInfo.systemUUID `""` }}
"""


def node_stages() -> list[dict[str, Any]]:
    """A node is Ready once kwok sees it (kwok's node-initialize, without the `phase` a kubelet does
    not write; a node created without resources gets kwok's defaults, 1k CPUs, 1Ti and 1M Pods, as
    the emulator's kubelet gives its kwok nodes), and posts its status every 5 minutes as a kubelet
    with node leases does (kwok renews
    the Lease every 10 s, so the node lifecycle controller keeps it Ready)."""
    ready = _expr('.status.conditions.[] | select( .type == "Ready" ) | .status', "In", "True")
    return [
        _stage(
            "node-initialize",
            "Node",
            [_expr('.status.conditions.[] | select( .type == "Ready" ) | .status', "NotIn", "True")],
            {"statusTemplate": _NODE_READY},
        ),
        _stage("node-heartbeat", "Node", [ready], {"statusTemplate": _NODE_READY}, delay_ms=300_000),
    ]


def configuration(cidr: str) -> str:
    """kwok's --config: its options and every Stage, as YAML documents."""
    options = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokConfiguration",
        "metadata": {"name": "pyop-envtest"},
        "options": {
            "manageAllNodes": True,  # cluster mode has no real kubelet: every node is kwok's
            "cidr": cidr,
            "nodeLeaseDurationSeconds": 40,  # a kubelet's default
            # kwok's defaults, which a configuration file does not get
            "nodeLeaseParallelism": 4,
            "podPlayStageParallelism": 4,
            "nodePlayStageParallelism": 4,
            "podsOnNodeSyncParallelism": 4,
            "enableDebuggingHandlers": False,
            "enableProfilingHandler": False,
        },
    }
    docs = [options, *node_stages(), *pod_stages()]
    return "".join("---\n" + yamlio.dump(d, sort_keys=False) for d in docs)


def node(name: str = NODE_NAME, address: str = "10.0.0.1") -> dict[str, Any]:
    """A Node as a kubelet registers it (the labels of linux/amd64, its addresses and capacity),
    marked for kwok; kwok makes it Ready."""
    from pyscaffold_op.envtest.controllers.kubelet import node_labels

    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels(name), "annotations": {MANAGED: "fake"}},
        "spec": {},
        "status": {
            "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
            "capacity": NODE_CAPACITY,
            "allocatable": NODE_CAPACITY,
        },
    }


__all__ = ["NODE_NAME", "OUTCOME", "configuration", "node", "node_stages", "pod_stages"]
