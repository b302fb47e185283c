# ruff: noqa: E501 - marker comments read best on one line
"""Real-world-shaped kinds: a CronJob-like spec and a kind with int-or-string ports and free-form config."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from pyscaffold_op.apiextensions import apply_defaults, prune, validate
from pyscaffold_op.apiextensions.crdvalidation import check_crd
from pyscaffold_op.apimachinery import (
    CustomResource,
    FreeForm,
    GroupVersionKind,
    IntOrString,
    KubeModel,
    ListType,
    Quantity,
    XValidation,
)
from pyscaffold_op.gen.crd import build_crd


class ContainerPort(KubeModel):
    name: str | None = None
    container_port: int = Field(ge=1, le=65535)
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"


class Resources(KubeModel):
    limits: dict[str, Quantity] = Field(default_factory=dict)
    requests: dict[str, Quantity] = Field(default_factory=dict)


class Container(KubeModel):
    """A single application container."""

    name: str
    image: str
    command: list[str] = Field(default_factory=list)
    # +listType=map
    # +listMapKey=containerPort
    # +listMapKey=protocol
    ports: list[ContainerPort] = Field(default_factory=list)
    resources: Resources | None = None


class PodSpec(KubeModel):
    # +listType=map
    # +listMapKey=name
    containers: list[Container] = Field(min_length=1)
    restart_policy: Literal["OnFailure", "Never"] = "OnFailure"


class PodTemplate(KubeModel):
    metadata: FreeForm = Field(default_factory=dict)
    spec: PodSpec


class JobSpec(KubeModel):
    backoff_limit: int | None = Field(default=None, ge=0)
    template: PodTemplate


class JobTemplate(KubeModel):
    metadata: FreeForm = Field(default_factory=dict)
    spec: JobSpec


class CronJobSpec(KubeModel):
    """CronJobSpec defines the desired state of CronJob."""

    # +kubebuilder:validation:MinLength=0
    schedule: str
    """The schedule in Cron format."""
    # +optional
    # +kubebuilder:validation:Minimum=0
    starting_deadline_seconds: int | None = None
    """Deadline in seconds for starting the job if it misses its scheduled time."""
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Allow"
    """How to treat concurrent executions of a Job."""
    suspend: bool | None = None
    job_template: JobTemplate
    successful_jobs_history_limit: int = Field(default=3, ge=0)
    failed_jobs_history_limit: int = Field(default=1, ge=0)


class ObjectReference(KubeModel):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None


class CronJobStatus(KubeModel):
    active: list[ObjectReference] = Field(default_factory=list)
    last_schedule_time: datetime | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:resource:shortName=cj,categories=all
class CronJob(CustomResource):
    """CronJob is the Schema for the cronjobs API."""

    gvk = GroupVersionKind("batch.tutorial.kubebuilder.io", "v1", "CronJob")
    spec: CronJobSpec
    status: CronJobStatus | None = None


def test_cronjob_like_crd() -> None:
    crd = build_crd([CronJob])
    assert check_crd(crd) == []
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["jobTemplate", "schedule"]
    assert spec["properties"]["concurrencyPolicy"] == {
        "default": "Allow",
        "description": "How to treat concurrent executions of a Job.",
        "enum": ["Allow", "Forbid", "Replace"],
        "type": "string",
    }
    assert spec["properties"]["startingDeadlineSeconds"] == {
        "description": "Deadline in seconds for starting the job if it misses its scheduled time.",
        "minimum": 0,
        "type": "integer",
    }
    pod = spec["properties"]["jobTemplate"]["properties"]["spec"]["properties"]["template"]
    assert pod["properties"]["metadata"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    containers = pod["properties"]["spec"]["properties"]["containers"]
    assert containers["x-kubernetes-list-map-keys"] == ["name"] and containers["minItems"] == 1
    ports = containers["items"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    limits = containers["items"]["properties"]["resources"]["properties"]["limits"]
    assert limits["additionalProperties"]["x-kubernetes-int-or-string"] is True
    status = schema["properties"]["status"]
    assert status["properties"]["lastScheduleTime"] == {"format": "date-time", "type": "string"}
    assert crd["spec"]["names"]["shortNames"] == ["cj"]

    obj = {
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": "hello"},
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                {"name": "hello", "image": "busybox", "ports": [{"containerPort": 80}],
                 "resources": {"limits": {"cpu": "500m", "memory": 128}}},
            ]}}}},
        },
    }  # fmt: skip
    assert prune(obj, schema) == []
    apply_defaults(obj, schema)
    assert obj["spec"]["concurrencyPolicy"] == "Allow"
    assert (
        obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"]
        == "TCP"
    )
    assert validate(obj, schema) == []
    CronJob.model_validate(obj)  # and the Python side agrees


class ServicePort(KubeModel):
    name: str
    port: int = Field(ge=1, le=65535)
    target_port: IntOrString | None = None
    """Number or name of the port on the pods."""


# +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
class Scaling(KubeModel):
    min_replicas: int = 1
    max_replicas: int = 1


class GatewaySpec(KubeModel):
    ports: Annotated[list[ServicePort], ListType.map("name")] = Field(default_factory=list)
    max_surge: IntOrString = "25%"
    config: FreeForm = Field(default_factory=dict)
    """Free-form configuration handed to the proxy as is."""
    extra: Any = None
    scaling: Scaling = Field(default_factory=Scaling)
    tier: Annotated[str, XValidation("self in ['gold', 'silver']", message="unknown tier")] = "gold"


# +kubebuilder:object:root=true
class Gateway(CustomResource):
    gvk = GroupVersionKind("net.example.com", "v1beta1", "Gateway")
    spec: GatewaySpec = Field(default_factory=GatewaySpec)


def test_int_or_string_and_free_form_kind() -> None:
    crd = build_crd([Gateway])
    assert check_crd(crd) == []
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]["properties"]
    assert spec["maxSurge"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "default": "25%",
        "x-kubernetes-int-or-string": True,
    }
    assert spec["ports"]["items"]["properties"]["targetPort"]["x-kubernetes-int-or-string"] is True
    assert spec["config"]["x-kubernetes-preserve-unknown-fields"] is True
    assert spec["extra"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert (
        spec["scaling"]["x-kubernetes-validations"][0]["message"] == "minReplicas must not exceed maxReplicas"
    )
    assert spec["tier"]["x-kubernetes-validations"] == [
        {"message": "unknown tier", "rule": "self in ['gold', 'silver']"}
    ]
    obj = {"apiVersion": "net.example.com/v1beta1", "kind": "Gateway", "metadata": {"name": "g"},
           "spec": {"ports": [{"name": "http", "port": 80, "targetPort": "web"}, {"name": "x", "port": 81, "targetPort": 8081}],
                    "config": {"nested": {"anything": [1, "two"]}}, "extra": [1, 2]}}  # fmt: skip
    assert prune(obj, schema) == []
    assert validate(apply_defaults(obj, schema), schema) == []
    assert obj["spec"]["maxSurge"] == "25%"
