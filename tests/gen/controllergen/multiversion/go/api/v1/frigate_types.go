package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// FrigateSpec defines the desired state of Frigate.
type FrigateSpec struct {
	// The schedule in Cron format.
	Schedule string `json:"schedule"`
	// How many crew members.
	// +optional
	Crew *int32 `json:"crew,omitempty"`
}

// FrigateStatus defines the observed state of Frigate.
type FrigateStatus struct {
	// The phase.
	// +optional
	Phase string `json:"phase,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"

// Frigate is the Schema for the frigates API.
type Frigate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec FrigateSpec `json:"spec"`
	// +optional
	Status FrigateStatus `json:"status,omitempty"`
}
