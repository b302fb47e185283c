/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!
// NOTE: json tags are required.  Any new fields you add must have json tags for the fields to be serialized.

// BenchItemSpec is what the benchmark driver writes (benchmarks/bench_vs_kopf.py's CRD).
type BenchItemSpec struct {
	// value is echoed into status.observed.
	// +optional
	Value int64 `json:"value,omitempty"`
	// sentAt is the driver's wall time at create (seconds since the epoch).
	// +optional
	SentAt *float64 `json:"sentAt,omitempty"`
	// owner is a free-form string the driver sets.
	// +optional
	Owner string `json:"owner,omitempty"`
}

// BenchItemStatus is what the operator writes.
type BenchItemStatus struct {
	// observed is spec.value once handled.
	// +optional
	Observed *int64 `json:"observed,omitempty"`
	// handledAt is the wall time the reconcile started (seconds since the epoch).
	// +optional
	HandledAt *float64 `json:"handledAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// BenchItem is the Schema for the benchitems API
type BenchItem struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is a standard object metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec defines the desired state of BenchItem
	// +required
	Spec BenchItemSpec `json:"spec"`

	// status defines the observed state of BenchItem
	// +optional
	Status BenchItemStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// BenchItemList contains a list of BenchItem
type BenchItemList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []BenchItem `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &BenchItem{}, &BenchItemList{})
		return nil
	})
}
