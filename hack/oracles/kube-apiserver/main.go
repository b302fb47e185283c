// kube-apiserver built from k8s.io/kubernetes at the release pinned in ../versions.env: the same
// main as cmd/kube-apiserver, so the binary is the real server (hack/oracles/build.sh).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
