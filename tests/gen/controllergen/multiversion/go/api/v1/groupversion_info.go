// Package v1 contains API Schema definitions for the ship v1 API group.
// +kubebuilder:object:generate=true
// +groupName=ship.tutorial.kubebuilder.io
package v1
