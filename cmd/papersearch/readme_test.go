package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
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

// packageDoc says what is wrong with the doc comment of the package in
// dir, if it has Go files: "" when one of its files opens with "Package
// <name> " (or "Command <dir> " for a command).
func packageDoc(dir string) string {
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return err.Error()
	}
	for name, pkg := range pkgs {
		want := "Package " + name + " "
		if name == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		for _, f := range pkg.Files {
			if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), want) {
				return ""
			}
		}
		return fmt.Sprintf("no doc comment opening with %q says what the package owns", want)
	}
	return ""
}

// TestREADMELayout checks that the README's layout section names every
// package directory of the module, that every path it names exists, and
// that every package says what it owns in a doc comment ("Package name
// …", or "Command name …" for a command).
func TestREADMELayout(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "- **Layout**:")
	if start < 0 {
		t.Fatal("the README has no layout section")
	}
	layout := string(readme[start:])
	if end := strings.Index(layout[1:], "\n- **"); end >= 0 {
		layout = layout[:end+1]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_./]+)`").FindAllStringSubmatch(layout, -1) {
		p := strings.TrimSuffix(m[1], "/")
		named[p] = true
		if strings.Contains(p, "/") || strings.HasSuffix(m[1], "/") || strings.HasSuffix(p, ".go") {
			if _, err := os.Stat("../../" + p); err != nil {
				t.Errorf("the README's layout names %s, which does not exist", m[1])
			}
		}
	}
	reported := map[string]bool{}
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Dir(rel) == "." {
			return nil
		}
		dir := filepath.Dir(rel)
		if !named[dir] && !reported[dir] {
			reported[dir] = true
			t.Errorf("the README's layout does not name the package directory %s", dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "../.." {
			return filepath.SkipDir
		}
		if problem := packageDoc(path); problem != "" {
			t.Errorf("%s: %s", strings.TrimPrefix(filepath.ToSlash(path), "../../"), problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxFileLines is the longest a non-test, hand-written Go file may be: a
// longer one holds more than one concern and is split.
const maxFileLines = 400

// TestEveryLayerSaysWhatItIs: each package at the top level (and the
// command) has a doc.go whose package comment says what it holds.
func TestEveryLayerSaysWhatItIs(t *testing.T) {
	dirs := []string{"../..", "."}
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, filepath.Join("../..", e.Name()))
		}
	}
	for _, dir := range dirs {
		if goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(goFiles) == 0 {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, "doc.go"))
		if err != nil {
			t.Errorf("%s has no doc.go", dir)
			continue
		}
		if !regexp.MustCompile(`^// (Package|Command) \w+ `).Match(src) {
			t.Errorf("%s/doc.go does not open with its package comment", dir)
		}
	}
}

// maxParams bounds the parameters of a function (the receiver aside).
const maxParams = 6

// checkParams fails for a function or function literal of the file at path
// that takes more than maxParams parameters, outside package embed, whose
// matrix kernels keep the BLAS shape (m, n, k, a, lda, b, ldb, c, ldc) that
// their assembly and its Go declarations share.
func checkParams(t *testing.T, path string, src []byte) {
	t.Helper()
	rel := strings.TrimPrefix(filepath.ToSlash(path), "../../")
	if strings.HasPrefix(rel, "embed/") {
		return
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var ft *ast.FuncType
		switch n := n.(type) {
		case *ast.FuncDecl:
			ft = n.Type
		case *ast.FuncLit:
			ft = n.Type
		default:
			return true
		}
		count := 0
		for _, p := range ft.Params.List {
			count += max(1, len(p.Names))
		}
		if count > maxParams {
			t.Errorf("%s:%d: a function of %d parameters, over %d: group them", rel, fset.Position(n.Pos()).Line, count, maxParams)
		}
		return true
	})
}

// TestFilesHoldOneConcern: no hand-written non-test Go file of the module
// is over maxFileLines lines, asserts a type to an interface it does not
// name, or has a function of more than maxParams parameters.
func TestFilesHoldOneConcern(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`).Match(src) {
			return nil
		}
		if m := regexp.MustCompile(`\.\(interface\s*\{`).FindIndex(src); m != nil {
			t.Errorf("%s:%d asserts an undeclared interface: name it where it is used", strings.TrimPrefix(filepath.ToSlash(path), "../../"), 1+strings.Count(string(src[:m[0]]), "\n"))
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it by concern", strings.TrimPrefix(filepath.ToSlash(path), "../../"), n, maxFileLines)
		}
		checkParams(t, path, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
