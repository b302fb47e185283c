// Command pyopcronjob generates kubebuilder's CronJob tutorial project with kubebuilder's own tutorial
// generator (hack/docs/internal/cronjob-tutorial, what writes docs/book/src/cronjob-tutorial/testdata/project
// in kubebuilder's repository). hack/oracles/gosuites.sh copies it into the kubebuilder module as
// hack/docs/pyopcronjob, the one place allowed to import that internal package.
//
// The generator's Prepare step is left out: it deletes every controller-gen and kustomize found on PATH.
//
//	go run ./hack/docs/pyopcronjob KUBEBUILDER_BINARY PROJECT_DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	cronjob "sigs.k8s.io/kubebuilder/v4/hack/docs/internal/cronjob-tutorial"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pyopcronjob KUBEBUILDER_BINARY PROJECT_DIR")
		os.Exit(2)
	}
	dir, err := filepath.Abs(os.Args[2])
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pyopcronjob:", err)
		os.Exit(1)
	}
	sample := cronjob.NewSample(os.Args[1], dir)
	sample.GenerateSampleProject()
	sample.UpdateTutorial()
}
