// olm-validate: operator-framework/api's bundle validators (what `operator-sdk bundle validate` runs),
// as a tiny command pyop's tests use as the judge of its bundles.
//
//	olm-validate [--select-optional suite=operatorframework|name=good-practices] [--k8s-version V] <bundle dir>
//
// Prints one JSON object per validator result line ({"level","type","field","detail"}) and exits 1
// when any error was found, 0 otherwise.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

type line struct {
	Level  string `json:"level"`
	Type   string `json:"type"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

func main() {
	optional := flag.String("select-optional", "", "suite=operatorframework or name=good-practices")
	k8sVersion := flag.String("k8s-version", "", "the Kubernetes version the optional validators check against")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate [--select-optional ...] <bundle dir>")
		os.Exit(2)
	}
	bundle, err := apimanifests.GetBundleFromDir(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: loading the bundle: %v\n", err)
		os.Exit(2)
	}
	validators := interfaces.Validators{}
	validators = append(validators, apivalidation.DefaultBundleValidators...)
	switch *optional {
	case "":
	case "suite=operatorframework":
		validators = append(validators, apivalidation.OperatorHubV2Validator, apivalidation.StandardCategoriesValidator,
			apivalidation.StandardCapabilitiesValidator, apivalidation.GoodPracticesValidator)
	case "name=operatorhub":
		validators = append(validators, apivalidation.OperatorHubV2Validator)
	case "name=good-practices":
		validators = append(validators, apivalidation.GoodPracticesValidator)
	default:
		fmt.Fprintf(os.Stderr, "error: unknown --select-optional %q\n", *optional)
		os.Exit(2)
	}
	objs := bundle.ObjectsToValidate()
	objs = append(objs, map[string]string{"k8s-version": *k8sVersion})
	failed := false
	enc := json.NewEncoder(os.Stdout)
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			failed = true
			_ = enc.Encode(line{"error", string(e.Type), e.Field, e.Error()})
		}
		for _, w := range result.Warnings {
			_ = enc.Encode(line{"warning", string(w.Type), w.Field, w.Error()})
		}
	}
	if failed {
		os.Exit(1)
	}
}
