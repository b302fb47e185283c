package v2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// CronSchedule is a schedule broken into its fields.
type CronSchedule struct {
	// Minute field.
	// +optional
	Minute *string `json:"minute,omitempty"`
	// Hour field.
	// +optional
	Hour *string `json:"hour,omitempty"`
}

// FrigateSpec defines the desired state of Frigate.
type FrigateSpec struct {
	// The schedule, by field.
	Schedule CronSchedule `json:"schedule"`
	// How many crew members.
	// +optional
	Crew *int64 `json:"crew,omitempty"`
}

// FrigateStatus defines the observed state of Frigate.
type FrigateStatus struct {
	// The phase.
	// +optional
	Phase string `json:"phase,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
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
