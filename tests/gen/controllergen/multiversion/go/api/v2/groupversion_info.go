// Package v2 contains API Schema definitions for the ship v2 API group.
// +kubebuilder:object:generate=true
// +groupName=ship.tutorial.kubebuilder.io
package v2
