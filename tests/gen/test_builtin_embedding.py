"""Built-in types embedded in CRD types: the schema controller-gen writes for the Go type.

The reference is `reference/cronjob_controller_gen.json`: the node signature of the CRD the real
controller-gen writes for the tutorial's Go types (`controllergen/cronjob/go`, the corpus of
test_controllergen.py), never pyop's output; it holds without Go installed.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from pyscaffold_op.apimachinery import (
    CustomResource,
    Duration,
    GroupVersionKind,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    Quantity,
    Time,
)
from pyscaffold_op.envtest import Environment
from pyscaffold_op.gen import generate_manifests
from pyscaffold_op.gen.schema import SchemaConverter
from pyscaffold_op.models.core_v1 import (
    LocalObjectReference,
    ObjectReference,
    PodSpec,
    PodTemplateSpec,
    ResourceRequirements,
)
from pyscaffold_op.models.meta_v1 import LabelSelector

from .reference.cronjob_reference import signature

REFERENCE = Path(__file__).parent / "reference" / "cronjob_controller_gen.json"

# kubebuilder v4's CronJob tutorial (api/v1/cronjob_types.go), written in pyop
CRONJOB_TYPES = '''\
from typing import Literal

from pydantic import Field

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.apimachinery import Int32, Int64, Time
from pyscaffold_op.models.batch_v1 import JobTemplateSpec
from pyscaffold_op.models.core_v1 import ObjectReference

from . import GROUP, VERSION


class CronJobSpec(KubeModel):
    """CronJobSpec defines the desired state of CronJob."""

    # +kubebuilder:validation:MinLength=0
    schedule: str
    """The schedule in Cron format."""
    # +kubebuilder:validation:Minimum=0
    starting_deadline_seconds: Int64 | None = None
    # +kubebuilder:default:=Allow
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec
    """Specifies the job that will be created when executing a CronJob."""
    successful_jobs_history_limit: Int32 | None = Field(default=None, ge=0)
    failed_jobs_history_limit: Int32 | None = Field(default=None, ge=0)


class CronJobStatus(KubeModel):
    """CronJobStatus defines the observed state of CronJob."""

    # +listType=atomic
    active: list[ObjectReference] | None = None
    last_schedule_time: Time | None = None
    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class CronJob(CustomResource):
    """CronJob is the Schema for the cronjobs API."""

    gvk = GroupVersionKind(GROUP, VERSION, "CronJob")
    spec: CronJobSpec
    status: CronJobStatus | None = None
'''

SAMPLE = """\
apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata:
  name: cronjob-sample
spec:
  schedule: "*/1 * * * *"
  startingDeadlineSeconds: 60
  concurrencyPolicy: Allow
  jobTemplate:
    spec:
      backoffLimit: 2
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox
            args: [/bin/sh, -c, date; echo Hello from the Kubernetes cluster]
            ports:
            - containerPort: 8080
            resources:
              limits: {cpu: 500m, memory: 64Mi}
"""


@pytest.fixture
def cronjob_project(project: Any) -> Any:
    builder = project("tutorial", domain="tutorial.kubebuilder.io")
    builder.api("batch", "v1", "CronJob", "cronjob_types", CRONJOB_TYPES)
    builder.sample("batch_v1_cronjob.yaml", SAMPLE)
    return builder


def _crd_schema(root: Path) -> dict[str, Any]:
    crd = yaml.safe_load((root / "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml").read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_cronjob_tutorial_crd_has_every_node_controller_gen_writes(cronjob_project: Any) -> None:
    root = cronjob_project.root
    generate_manifests(root)
    ours = signature(_crd_schema(root))
    reference = json.loads(REFERENCE.read_text())["nodes"]
    assert len(reference) > 1300  # the whole PodSpec tree, not a stub
    missing = sorted(set(reference) - set(ours))
    assert not missing, f"{len(missing)} nodes missing, e.g. {missing[:5]}"
    different = {p: (reference[p], ours[p]) for p in reference if reference[p] != ours[p]}
    assert not different, f"{len(different)} nodes differ, e.g. {list(different.items())[:3]}"
    assert sorted(set(ours) - set(reference)) == []
    # controller-gen v0.23 over k8s.io/api v0.37.2: 47 `+default`s of the Go types and the tutorial's Allow
    assert sum("default" in n for n in ours.values()) == 48
    assert sum("x-kubernetes-int-or-string" in n for n in ours.values()) == 47
    # and the check mode (structural rules + the sample validated) is clean
    assert generate_manifests(root, check=True) == []


async def test_emulator_serves_the_crd_and_defaults_a_sample(cronjob_project: Any) -> None:
    root = cronjob_project.root
    generate_manifests(root)
    body = yaml.safe_load(SAMPLE)
    async with (
        Environment(crd_paths=[root / "config/crd/bases"]) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=30) as http,
    ):
        url = "/apis/batch.tutorial.kubebuilder.io/v1/namespaces/default/cronjobs"
        created = await http.post(url, json=body)
        assert created.status_code == 201, created.text
        container = created.json()["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
        assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]  # the +default
        # controller-gen's bare `metadata: {type: object}`: the server prunes what is inside it
        labelled = json.loads(json.dumps(body))
        labelled["metadata"]["name"] = "labelled"
        labelled["spec"]["jobTemplate"]["metadata"] = {"labels": {"app": "hello"}}
        stored = await http.post(url, json=labelled)
        assert stored.status_code == 201, stored.text
        assert stored.json()["spec"]["jobTemplate"].get("metadata", {}) == {}
        bad = json.loads(json.dumps(body))
        bad["metadata"]["name"] = "bad"
        bad["spec"]["jobTemplate"]["spec"]["backoffLimit"] = "two"
        refused = await http.post(url, json=bad)
        assert refused.status_code == 422, refused.text
        assert "spec.jobTemplate.spec.backoffLimit" in refused.text


class Embeds(KubeModel):
    pod: PodSpec | None = None
    template: PodTemplateSpec | None = None
    resources: ResourceRequirements | None = None
    target: ObjectReference | None = None
    secret: LocalObjectReference | None = None
    selector: LabelSelector | None = None


class EmbedsKind(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Embeds")
    spec: Embeds


def without_descriptions(node: Any) -> Any:
    """The schema's structure: every `description` left out (a property named so is kept)."""
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        k: {p: without_descriptions(s) for p, s in v.items()}
        if k == "properties"
        else without_descriptions(v)
        for k, v in node.items()
        if k != "description"
    }


def test_each_embeddable_type_has_its_go_schema() -> None:
    described = SchemaConverter().kind_schema(EmbedsKind)["properties"]["spec"]["properties"]
    # the descriptions are controller-gen's (the corpus of test_controllergen.py compares every one)
    metadata = described["template"]["properties"]["metadata"]
    assert metadata["description"].startswith("Standard object's metadata.")
    assert described["secret"]["description"].startswith("LocalObjectReference contains enough information")
    spec = without_descriptions(described)
    assert spec["template"]["properties"]["metadata"] == {"type": "object"}
    assert spec["template"]["properties"]["spec"] == spec["pod"]
    assert spec["pod"]["required"] == ["containers"]
    containers = spec["pod"]["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    limits = spec["resources"]["properties"]["limits"]["additionalProperties"]
    assert limits["x-kubernetes-int-or-string"] is True and "pattern" in limits
    assert spec["secret"] == {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "properties": {"name": {"type": "string", "default": ""}},
    }
    assert spec["selector"]["x-kubernetes-map-type"] == "atomic"
    assert spec["selector"]["properties"]["matchExpressions"]["items"]["required"] == ["key", "operator"]
    assert spec["target"]["x-kubernetes-map-type"] == "atomic"


class Scalars(KubeModel):
    small: Int32
    big: Int64 | None = None
    # +kubebuilder:validation:Format=int32
    marked: int = 0
    timeout: Duration | None = None
    plain: timedelta | None = None
    when: Time | None = None
    port: IntOrString | None = None
    memory: Quantity | None = None


def test_scalar_types_have_controller_gens_schema() -> None:
    props = SchemaConverter().model_schema(Scalars)["properties"]
    assert props["small"] == {"type": "integer", "format": "int32"}
    assert props["big"] == {"type": "integer", "format": "int64"}
    assert props["marked"] == {"type": "integer", "format": "int32", "default": 0}
    assert props["timeout"] == props["plain"] == {"type": "string"}  # metav1.Duration
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert props["port"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    assert props["memory"]["x-kubernetes-int-or-string"] is True and props["memory"]["pattern"].startswith(
        "^"
    )


def test_the_descriptions_of_built_in_types_load_only_when_a_crd_embeds_one() -> None:
    import subprocess
    import sys

    code = """
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.gen import builtin
from pyscaffold_op.gen.crd import build_crd
from pyscaffold_op.models.core_v1 import LocalObjectReference

class Plain(KubeModel):
    size: int = 1

class PlainKind(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Plain")
    spec: Plain

class Embeds(KubeModel):
    secret: LocalObjectReference | None = None

class EmbedsKind(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Embeds")
    spec: Embeds

build_crd([PlainKind])
print(builtin._descriptions.cache_info().currsize, end=" ")
build_crd([EmbedsKind])
print(builtin._descriptions.cache_info().currsize)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "1"]
