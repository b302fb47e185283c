// Command yamlcheck reads YAML files as Kubernetes tools do and prints them as JSON: the judge of
// tests/test_go_yaml.py, which compares Go's reading of every file pyop writes with Python's intent.
//
// Usage: yamlcheck FILE...
//
// Output: one JSON object {"FILE": {"k8s": [doc...], "v3": [doc...]}}: each document of each file as
// sigs.k8s.io/yaml reads it (kubectl, Helm, kubebuilder: go-yaml v2's plain scalars), and as go-yaml
// v3 reads it into an interface (timestamps become time.Time, written as RFC 3339), for the readers
// that use v3 directly. A document that does not parse is {"error": "..."}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// kubectl's YAML reader splits a stream at lines that start with "---".
var separator = regexp.MustCompile(`(?m)^---[ \t]*(?:#.*)?$`)

func documents(text string) []string {
	var docs []string
	for _, part := range separator.Split(text, -1) {
		if strings.TrimSpace(stripComments(part)) != "" {
			docs = append(docs, part)
		}
	}
	return docs
}

func stripComments(text string) string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func k8s(doc string) any {
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return json.RawMessage(data)
}

func v3(doc string) any {
	var value any
	if err := yamlv3.Unmarshal([]byte(doc), &value); err != nil {
		return map[string]string{"error": err.Error()}
	}
	data, err := json.Marshal(jsonable(value))
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return json.RawMessage(data)
}

// jsonable turns v3's map[string]any (and non-string keys) into what encoding/json writes.
func jsonable(value any) any {
	switch v := value.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			out[key] = jsonable(item)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for key, item := range v {
			out[fmt.Sprint(key)] = jsonable(item)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = jsonable(item)
		}
		return out
	default:
		return v
	}
}

func main() {
	result := map[string]map[string][]any{}
	for _, path := range os.Args[1:] {
		text, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		entry := map[string][]any{"k8s": {}, "v3": {}}
		for _, doc := range documents(string(text)) {
			entry["k8s"] = append(entry["k8s"], k8s(doc))
			entry["v3"] = append(entry["v3"], v3(doc))
		}
		result[path] = entry
	}
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(result); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
