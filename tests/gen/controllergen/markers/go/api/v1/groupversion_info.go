// Package v1 contains API Schema definitions for the markers v1 API group.
// +kubebuilder:object:generate=true
// +groupName=markers.pyop.dev
package v1
