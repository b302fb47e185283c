// pathcheck: kubebuilder's own verdict on external-API flags, for pyop's tests
// (tests/scaffold/test_external_flags.py). Each stdin line is "path<TAB>value" or "module<TAB>value";
// each output line is "ok" or the error: for a path, kubebuilder's resource.Validate of an external
// resource with that path; for a module, golang.org/x/mod's CheckPath of the part before '@'.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/mod/module"
	"sigs.k8s.io/kubebuilder/v4/pkg/model/resource"
)

func verdict(err error) string {
	if err != nil {
		return strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return "ok"
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		what, value, _ := strings.Cut(in.Text(), "\t")
		switch what {
		case "path":
			res := resource.Resource{
				GVK:      resource.GVK{Group: "cert-manager", Domain: "io", Version: "v1", Kind: "Issuer"},
				Plural:   "issuers",
				External: true,
				Path:     value,
			}
			fmt.Fprintln(out, verdict(res.Validate()))
		case "module":
			path, _, _ := strings.Cut(value, "@")
			fmt.Fprintln(out, verdict(module.CheckPath(path)))
		default:
			fmt.Fprintln(out, "unknown check "+what)
		}
	}
}
