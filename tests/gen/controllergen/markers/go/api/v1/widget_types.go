package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Port is one port by name.
// +structType=atomic
type Port struct {
	// The port's name.
	Name string `json:"name"`
	// The port number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// The protocol.
	// +kubebuilder:default=TCP
	// +optional
	Protocol string `json:"protocol,omitempty"`
}

// WidgetSpec defines the desired state of Widget.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type WidgetSpec struct {
	// Lower bound.
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	MinReplicas int32 `json:"minReplicas"`
	// Upper bound.
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:validation:MultipleOf=2
	MaxReplicas int64 `json:"maxReplicas"`
	// A name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// A mode.
	// +kubebuilder:validation:Enum=Fast;Slow
	// +kubebuilder:default=Fast
	// +optional
	Mode string `json:"mode,omitempty"`
	// An e-mail address.
	// +kubebuilder:validation:Format=email
	// +optional
	Email string `json:"email,omitempty"`
	// Tags, unique.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=20
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Labels.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=5
	// +mapType=granular
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Ports by name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// A memory amount.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
	// A timeout.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// When it starts.
	// +optional
	StartAt *metav1.Time `json:"startAt,omitempty"`
	// A port or its name.
	// +optional
	Target *intstr.IntOrString `json:"target,omitempty"`
	// A note that may be null.
	// +nullable
	// +optional
	Note *string `json:"note,omitempty"`
	// An embedded object.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *runtime.RawExtension `json:"template,omitempty"`
	// Anything at all.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Extra *runtime.RawExtension `json:"extra,omitempty"`
	// A number as a string or an integer.
	// +kubebuilder:validation:XIntOrString
	// +optional
	Size *intstr.IntOrString `json:"size,omitempty"`
	// Weights by name.
	// +optional
	Weights map[string]int64 `json:"weights,omitempty"`
	// Must be set.
	// +required
	Owner string `json:"owner"`
	// Retries.
	// +kubebuilder:default=3
	// +optional
	Retries *int32 `json:"retries,omitempty"`
}

// WidgetStatus defines the observed state of Widget.
type WidgetStatus struct {
	// Replicas running.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// The selector, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.maxReplicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Cluster,shortName=wd;wdg,categories=all;pyop
// +kubebuilder:printcolumn:name="Max",type="integer",JSONPath=".spec.maxReplicas",description="The upper bound"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:storageversion

// Widget is the Schema for the widgets API.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec WidgetSpec `json:"spec"`
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}
