# Copyright The programming-kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The At API: edit the Spec and Status below, then run "make manifests" to regenerate the CRD.

EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
Attribute docstrings (the string under each field) become the field descriptions of the generated CRD;
`# +kubebuilder:validation:...` comment lines directly above a field become its validation rules.
"""

from pydantic import Field
from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel

from programming_kubernetes.api.v1alpha1.groupversion_info import GROUP, VERSION


class AtSpec(KubeModel):
    """AtSpec defines the desired state of At."""

    # INSERT ADDITIONAL SPEC FIELDS - desired state of cluster. Run "make manifests" after editing.
    foo: str | None = None
    """foo is an example field of At. Edit at_types.py to remove/update."""


class AtStatus(KubeModel):
    """AtStatus defines the observed state of At."""

    # INSERT ADDITIONAL STATUS FIELDS - observed state of cluster. Run "make manifests" after editing.
    # +listType=map
    # +listMapKey=type
    # +optional
    conditions: list[Condition] = Field(default_factory=list[Condition])
    """Conditions represent the current state of the At resource."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class At(CustomResource):
    """At is the Schema for the ats API."""

    gvk = GroupVersionKind(GROUP, VERSION, "At")
    plural = "ats"
    namespaced = True

    spec: AtSpec
    status: AtStatus | None = None
