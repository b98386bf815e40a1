package main

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEConfigurationTable checks that the README's configuration
// table lists exactly the PAPERSEARCH_* variables the service reads, each
// with the default the service uses, so the two cannot drift apart.
func TestREADMEConfigurationTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	defaults := map[string]string{}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		if name := typ.Field(i).Tag.Get("envconfig"); name != "" {
			read = append(read, envPrefix+"_"+name)
			defaults[envPrefix+"_"+name] = typ.Field(i).Tag.Get("default")
		}
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(PAPERSEARCH_[A-Z_]+)` \\| ([^|]*) \\|").FindAllStringSubmatch(string(readme), -1) {
		listed = append(listed, m[1])
		if d := defaults[m[1]]; d != "" && !strings.HasPrefix(m[2], "`"+d+"`") {
			t.Errorf("the README gives %s the default %s; the service's is %q", m[1], m[2], d)
		}
	}
	for _, v := range read {
		if !slices.Contains(listed, v) {
			t.Errorf("the README's configuration table lacks %s, which the service reads", v)
		}
	}
	for _, v := range listed {
		if !slices.Contains(read, v) {
			t.Errorf("the README's configuration table lists %s, which the service does not read", v)
		}
	}
}
