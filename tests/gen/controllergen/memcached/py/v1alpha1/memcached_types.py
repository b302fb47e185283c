"""kubebuilder's getting-started Memcached (api/v1alpha1/memcached_types.go, v4.16), as the Go beside it."""

from pydantic import Field

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, Int32, KubeModel

from . import GROUP, VERSION


class MemcachedSpec(KubeModel):
    """MemcachedSpec defines the desired state of Memcached."""

    # +kubebuilder:validation:Minimum=0
    # +required
    size: Int32
    """size defines the number of Memcached instances"""


class MemcachedStatus(KubeModel):
    """MemcachedStatus defines the observed state of Memcached."""

    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] = Field(default_factory=list[Condition])
    """conditions represent the current state of the Memcached resource."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class Memcached(CustomResource):
    """Memcached is the Schema for the memcacheds API."""

    gvk = GroupVersionKind(GROUP, VERSION, "Memcached")
    spec: MemcachedSpec
    """spec defines the desired state of Memcached"""
    status: MemcachedStatus | None = None
    """status defines the observed state of Memcached"""
