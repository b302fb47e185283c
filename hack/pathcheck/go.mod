module github.com/pyscaffold-op/pyop/hack/pathcheck

go 1.26.0

require (
	golang.org/x/mod v0.41.0
	sigs.k8s.io/kubebuilder/v4 v4.16.0
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gobuffalo/flect v1.0.3 // indirect
	k8s.io/apimachinery v0.37.0 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
)
