# ruff: noqa: E501 - markers read best on one line, as in the Go twin
"""Every marker of the corpus's Go twin (go/api/v1/widget_types.go), written in pyop."""

from typing import Any

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

from . import GROUP, VERSION


# +structType=atomic
class Port(KubeModel):
    """Port is one port by name."""

    name: str
    """The port's name."""
    # +kubebuilder:validation:Minimum=1
    # +kubebuilder:validation:Maximum=65535
    port: Int32
    """The port number."""
    # +kubebuilder:default=TCP
    protocol: str | None = None
    """The protocol."""


# +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
class WidgetSpec(KubeModel):
    """WidgetSpec defines the desired state of Widget."""

    # +kubebuilder:validation:ExclusiveMinimum=true
    # +kubebuilder:validation:Minimum=0
    min_replicas: Int32
    """Lower bound."""
    # +kubebuilder:validation:Maximum=100
    # +kubebuilder:validation:MultipleOf=2
    max_replicas: Int64
    """Upper bound."""
    # +kubebuilder:validation:MinLength=1
    # +kubebuilder:validation:MaxLength=63
    # +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
    name: str
    """A name."""
    # +kubebuilder:validation:Enum=Fast;Slow
    # +kubebuilder:default=Fast
    mode: str | None = None
    """A mode."""
    # +kubebuilder:validation:Format=email
    email: str | None = None
    """An e-mail address."""
    # +kubebuilder:validation:MinItems=1
    # +kubebuilder:validation:MaxItems=10
    # +kubebuilder:validation:items:MaxLength=20
    # +listType=set
    tags: list[str] | None = None
    """Tags, unique."""
    # +kubebuilder:validation:MinProperties=1
    # +kubebuilder:validation:MaxProperties=5
    # +mapType=granular
    labels: dict[str, str] | None = None
    """Labels."""
    # +listType=map
    # +listMapKey=name
    ports: list[Port] | None = None
    """Ports by name."""
    memory: Quantity | None = None
    """A memory amount."""
    timeout: Duration | None = None
    """A timeout."""
    start_at: Time | None = None
    """When it starts."""
    target: IntOrString | None = None
    """A port or its name."""
    # +nullable
    note: str | None = None
    """A note that may be null."""
    # +kubebuilder:validation:EmbeddedResource
    # +kubebuilder:pruning:PreserveUnknownFields
    template: dict[str, Any] | None = None
    """An embedded object."""
    # +kubebuilder:validation:Schemaless
    # +kubebuilder:validation:Type=object
    # +kubebuilder:pruning:PreserveUnknownFields
    extra: dict[str, Any] | None = None
    """Anything at all."""
    # +kubebuilder:validation:XIntOrString
    size: IntOrString | None = None
    """A number as a string or an integer."""
    weights: dict[str, Int64] | None = None
    """Weights by name."""
    owner: str
    """Must be set."""
    # +kubebuilder:default=3
    retries: Int32 | None = None
    """Retries."""


class WidgetStatus(KubeModel):
    """WidgetStatus defines the observed state of Widget."""

    replicas: Int32 | None = None
    """Replicas running."""
    selector: str | None = None
    """The selector, for the scale subresource."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:subresource:scale:specpath=.spec.maxReplicas,statuspath=.status.replicas,selectorpath=.status.selector
# +kubebuilder:resource:scope=Cluster,shortName=wd;wdg,categories=all;pyop
# +kubebuilder:printcolumn:name="Max",type="integer",JSONPath=".spec.maxReplicas",description="The upper bound"
# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
# +kubebuilder:storageversion
class Widget(CustomResource):
    """Widget is the Schema for the widgets API."""

    gvk = GroupVersionKind(GROUP, VERSION, "Widget")
    plural = "widgets"
    namespaced = False
    spec: WidgetSpec
    status: WidgetStatus | None = None
