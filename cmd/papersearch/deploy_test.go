package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
)

// TestDeployFilesUseKnownVariables checks that every PAPERSEARCH_* variable
// the deployment files set is one the service reads, so they cannot drift
// from the code.
func TestDeployFilesUseKnownVariables(t *testing.T) {
	known := map[string]bool{}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		if name := typ.Field(i).Tag.Get("envconfig"); name != "" {
			known[envPrefix+"_"+name] = true
		}
	}
	files, _ := filepath.Glob("../../deploy/*")
	more, _ := filepath.Glob("../../deploy/k8s/*.yaml")
	files = append(files, more...)
	re := regexp.MustCompile(`PAPERSEARCH_[A-Z_]+`)
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a folder
		}
		for _, v := range re.FindAllString(string(b), -1) {
			seen++
			if !known[v] {
				t.Errorf("%s sets %s, which papersearch does not read", f, v)
			}
		}
	}
	if seen < 10 {
		t.Errorf("found only %d PAPERSEARCH_ variables in deploy/; is the path right?", seen)
	}
}

// TestDeployFilesSetTheAPIKey: a deployment that listens beyond loopback
// answers every write 403 without PAPERSEARCH_API_KEY (the README's rule),
// so each one that listens on all addresses sets it.
func TestDeployFilesSetTheAPIKey(t *testing.T) {
	for _, f := range []string{"../../deploy/compose.yaml", "../../deploy/k8s/papersearch.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`PAPERSEARCH_ADDR:\s*"?0\.0\.0\.0`).Match(b) && !regexp.MustCompile(`PAPERSEARCH_API_KEY\b`).Match(b) {
			t.Errorf("%s listens on all addresses but sets no PAPERSEARCH_API_KEY: every write would answer 403", f)
		}
	}
}
