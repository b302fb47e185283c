module github.com/pyscaffold-op/pyop/hack/yamlcheck

go 1.22

require (
	go.yaml.in/yaml/v3 v3.0.4
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
