"""Events as a cluster records them (issue 36): the kubelet's, the scheduler's (events.k8s.io), the
workload controllers', with client-go's counting, aggregation and spam filtering; and the simulated
scheduler's filters (a cordoned node takes no Pods)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment, FakeClock, KubeletSimulator, Workloads
from pyscaffold_op.envtest.controllers.events import EventRecorder
from pyscaffold_op.testing import eventually

CORE = "/api/v1/namespaces/default/events"
PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, image: str = "nginx:1.25", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "web", "image": image}], **spec},
    }


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=True) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=10) as c:
        yield c


async def events_about(http: httpx2.AsyncClient, name: str, *reasons: str) -> list[dict[str, Any]]:
    """core/v1 Events about `name`, once every reason in `reasons` is there."""

    async def check() -> list[dict[str, Any]] | None:
        items = (await http.get(CORE)).json()["items"]
        mine = [e for e in items if e["involvedObject"]["name"] == name]
        return mine if set(reasons) <= {e["reason"] for e in mine} else None

    return await eventually(check, timeout=10)


async def test_a_pods_life_in_events(http: httpx2.AsyncClient) -> None:
    await http.post(PODS, json=pod("a"))
    events = await events_about(http, "a", "Scheduled", "Pulling", "Pulled", "Created", "Started")
    by_reason = {e["reason"]: e for e in events}
    scheduled = by_reason["Scheduled"]
    assert scheduled["message"] == "Successfully assigned default/a to envtest-node"
    assert (scheduled["reportingComponent"], scheduled["action"]) == ("default-scheduler", "Binding")
    assert scheduled["reportingInstance"].startswith("default-scheduler-")
    assert scheduled["eventTime"] and scheduled["source"] == {}  # an events.k8s.io/v1 Event, seen as core/v1
    new = (
        await http.get("/apis/events.k8s.io/v1/namespaces/default/events/" + scheduled["metadata"]["name"])
    ).json()
    assert (new["reportingController"], new["note"]) == ("default-scheduler", scheduled["message"])
    pulled = by_reason["Pulled"]
    assert pulled["message"].startswith('Successfully pulled image "nginx:1.25" in ')
    assert pulled["message"].endswith(" bytes.")
    assert by_reason["Pulling"]["message"] == 'Pulling image "nginx:1.25"'
    assert (by_reason["Created"]["message"], by_reason["Started"]["message"]) == (
        "Container created",
        "Container started",
    )
    started = by_reason["Started"]
    assert started["source"] == {"component": "kubelet", "host": "envtest-node"}
    assert (started["reportingComponent"], started["reportingInstance"]) == ("kubelet", "envtest-node")
    assert started["involvedObject"]["fieldPath"] == "spec.containers{web}"

    await http.post(PODS, json=pod("b"))  # the image is on the node now
    events = await events_about(http, "b", "Pulled", "Started")
    pulled = next(e for e in events if e["reason"] == "Pulled")
    assert (
        pulled["message"]
        == 'Container image "nginx:1.25" already present on machine and can be accessed by the pod'
    )
    assert "Pulling" not in {e["reason"] for e in events}

    await http.delete(f"{PODS}/b")
    killing = next(e for e in await events_about(http, "b", "Killing") if e["reason"] == "Killing")
    assert killing["message"] == "Stopping container web"


async def test_binding_sets_pod_scheduled(http: httpx2.AsyncClient) -> None:
    r = await http.post(PODS, json=pod("c"))
    assert r.status_code == 201

    async def bound() -> dict[str, Any] | None:
        got = (await http.get(f"{PODS}/c")).json()
        return got if got["spec"].get("nodeName") else None

    got = await eventually(bound)
    scheduled = next(c for c in got["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["status"] == "True"
    # the binding writes no managedFields entry of its own (the real field manager tracks the Binding)
    assert "kube-scheduler" not in {m["manager"] for m in got["metadata"].get("managedFields") or []}


async def test_a_cordoned_node_takes_no_pods(http: httpx2.AsyncClient) -> None:
    r = await http.patch(
        "/api/v1/nodes/envtest-node",
        json={"spec": {"unschedulable": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200
    await http.post(PODS, json=pod("d"))
    msg = (
        "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    [failed] = [
        e for e in await events_about(http, "d", "FailedScheduling") if e["reason"] == "FailedScheduling"
    ]
    assert (failed["type"], failed["message"], failed["action"]) == ("Warning", msg, "Scheduling")
    got = (await http.get(f"{PODS}/d")).json()
    assert not got["spec"].get("nodeName")
    cond = next(c for c in got["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
    # the node lifecycle controller taints a cordoned node
    node = (await http.get("/api/v1/nodes/envtest-node")).json()
    assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"} in [
        {k: t[k] for k in ("key", "effect")} for t in node["spec"].get("taints") or []
    ]
    # a Pod that tolerates it is scheduled anyway; uncordoning lets the other one in
    tolerant = pod("e", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    await http.post(PODS, json=tolerant)
    await events_about(http, "e", "Scheduled")
    await http.patch(
        "/api/v1/nodes/envtest-node",
        json={"spec": {"unschedulable": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    await events_about(http, "d", "Scheduled")
    node = (await http.get("/api/v1/nodes/envtest-node")).json()
    assert not node["spec"].get("taints")


async def test_requests_must_fit_the_nodes_allocatable(http: httpx2.AsyncClient) -> None:
    """NodeResourcesFit: the node's allocatable (8 CPUs) less what its Pods request; more than the
    node has at all is beyond preemption, less finds no victims, and a freed node takes the Pod."""

    def asking(name: str, cpu: str) -> dict[str, Any]:
        body = pod(name)
        body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
        return body

    async def failed(name: str) -> str:
        [e] = [
            e for e in await events_about(http, name, "FailedScheduling") if e["reason"] == "FailedScheduling"
        ]
        return str(e["message"])

    await http.post(PODS, json=asking("huge", "100"))
    assert await failed("huge") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling."
    )
    await http.post(PODS, json=asking("first", "5"))
    await events_about(http, "first", "Scheduled")
    await http.post(PODS, json=asking("second", "5"))
    assert await failed("second") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    await http.delete(f"{PODS}/first", params={"gracePeriodSeconds": "0"})
    await events_about(http, "second", "Scheduled")


async def test_job_and_statefulset_events(http: httpx2.AsyncClient) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "once"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                }
            }
        },
    }
    await http.post("/apis/batch/v1/namespaces/default/jobs", json=job)
    events = await events_about(http, "once", "SuccessfulCreate", "Completed")
    assert {e["message"] for e in events if e["reason"] == "Completed"} == {"Job completed"}
    assert {e["source"]["component"] for e in events} == {"job-controller"}
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    await http.post("/apis/apps/v1/namespaces/default/statefulsets", json=sts)
    events = await events_about(http, "web", "SuccessfulCreate")
    assert [e["message"] for e in events] == ["Create Pod web-0 in StatefulSet web successful"]


async def test_cronjob_events() -> None:
    clock = FakeClock()
    async with (
        Environment(kubelet=KubeletSimulator(pending_seconds=0.01), workloads=Workloads(clock=clock)) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=10) as http,
    ):
        cj = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "tick"},
            "spec": {
                "schedule": "* * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                            }
                        }
                    }
                },
            },
        }
        await http.post("/apis/batch/v1/namespaces/default/cronjobs", json=cj)
        clock.advance(61)
        events = await events_about(http, "tick", "SuccessfulCreate", "SawCompletedJob")
        created = next(e for e in events if e["reason"] == "SuccessfulCreate")
        job = created["message"].removeprefix("Created job ")
        assert job.startswith("tick-")
        saw = next(e for e in events if e["reason"] == "SawCompletedJob")
        assert saw["message"] == f"Saw completed job: {job}, condition: Complete"
        assert saw["source"] == {"component": "cronjob-controller"}


async def test_the_recorder_counts_aggregates_and_filters(env: Environment, http: httpx2.AsyncClient) -> None:
    clock = FakeClock()
    recorder = EventRecorder("test-controller", clock=clock)
    recorder.attach(env.store)
    cm = (await http.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "x"}})).json()

    async def mine() -> list[dict[str, Any]]:
        items = (await http.get(CORE)).json()["items"]
        return [e for e in items if e["source"].get("component") == "test-controller"]

    recorder.event(cm, "Normal", "Same", "again and again")
    clock.advance(5)
    recorder.event(cm, "Normal", "Same", "again and again")
    [event] = await mine()
    assert event["count"] == 2 and event["firstTimestamp"] != event["lastTimestamp"]

    for i in range(9):  # the 10th distinct message of one reason within 10 minutes is combined
        recorder.event(cm, "Normal", "Many", f"message {i}")
    many = [e for e in await mine() if e["reason"] == "Many"]
    assert len(many) == 9 and not any(e["message"].startswith("(combined") for e in many)
    recorder.event(cm, "Normal", "Many", "message 9")
    recorder.event(cm, "Normal", "Many", "message 10")
    combined = [e for e in await mine() if e["message"].startswith("(combined from similar events): ")]
    assert len(combined) == 1 and combined[0]["count"] == 2
    assert combined[0]["message"] == "(combined from similar events): message 10"

    # 25 events per object and source, then one every 5 minutes
    for i in range(20):
        recorder.event(cm, "Warning", f"Spam{i}", "spam")
    spam = [e for e in await mine() if e["reason"].startswith("Spam")]
    assert len(spam) == 20  # a fresh bucket for Warning: 25 allowed
    for i in range(20, 30):
        recorder.event(cm, "Warning", f"Spam{i}", "spam")
    assert len([e for e in await mine() if e["reason"].startswith("Spam")]) == 25
    clock.advance(timedelta(minutes=5).total_seconds())
    recorder.event(cm, "Warning", "Spam30", "spam")
    assert len([e for e in await mine() if e["reason"].startswith("Spam")]) == 26
    recorder.detach()


def test_a_daemon_pods_message_counts_the_other_nodes_as_prefiltered() -> None:
    """NodeAffinity's PreFilter keeps only the nodes a Pod names (a DaemonSet's Pods name theirs): the
    rest are 'node(s) didn't satisfy plugin(s) [NodeAffinity]' (the message a cluster gives)."""
    from pyscaffold_op.envtest.controllers.scheduler import fit_error

    def node(name: str, **status: Any) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {}, "status": status}

    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}
    daemon = pod(
        "agent",
        affinity={
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        },
    )
    nodes = [node("n0"), node("n1", allocatable={"pods": "110"}), node("n2")]
    assert fit_error(daemon, nodes) == (
        "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
