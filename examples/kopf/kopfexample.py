"""The KopfExample kind of kopf's examples (kopf's examples/crd.yaml), as pyop types.

kopf's CRD keeps spec and status free-form and its printer columns read `.status.create_fn.children`,
the key kopf writes a handler's return value under. Here the fields are typed, so `crd.yaml` is
generated from this file (`python -m pyscaffold_op.gen.crd`-style, see test_kopf_crd.py), and the
columns name the wire spelling of the fields: `.status.children`, not a Python name.
"""

from __future__ import annotations

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class KopfExampleSpec(KubeModel):
    duration: str | None = None
    """For how long the child Pod sleeps (`sleep` syntax: 30, 1m)."""

    field: str | None = None
    """A value the daemons, timers and webhooks print and check."""

    items: list[str] | None = None

    injected: int | None = None
    """Set by the mutating webhook on objects labelled somelabel=somevalue."""


class KopfExampleStatus(KubeModel):
    children: list[str] | None = None
    """The uids of the Pods created for this object."""

    message: str | None = None
    """What the daemons report."""

    field: str | None = None
    """Must equal spec.field when written through the status subresource (the admission example)."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:resource:shortName=kopfexes;kopfex;kexes;kex
# +kubebuilder:printcolumn:name="Duration",type="string",JSONPath=".spec.duration",description="For how long the pod should sleep."
# +kubebuilder:printcolumn:name="Children",type="string",JSONPath=".status.children",description="The children pods created."
# +kubebuilder:printcolumn:name="Message",type="string",JSONPath=".status.message",description="What the daemons report."
class KopfExample(CustomResource):
    gvk = GroupVersionKind("kopf.dev", "v1", "KopfExample")
    spec: KopfExampleSpec = KopfExampleSpec()
    status: KopfExampleStatus | None = None


def kopf_example(name: str, namespace: str = "default", **spec: object) -> KopfExample:
    """kopf's examples/obj.yaml, named `name`, with `spec` overriding its fields."""
    return KopfExample.model_validate(
        {
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {"somelabel": "somevalue"},
                "annotations": {"someannotation": "somevalue"},
            },
            "spec": {"duration": "1m", "field": "value", "items": ["item1", "item2"], **spec},
        }
    )


if __name__ == "__main__":  # python examples/kopf/kopfexample.py > examples/kopf/crd.yaml
    import sys

    from pyscaffold_op.gen.crd import build_crds
    from pyscaffold_op.yamlio import dump_documents

    sys.stdout.write(dump_documents(build_crds([KopfExample])))
