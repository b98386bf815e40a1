package catalog_test

import (
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeMethods are the methods by which a storage.Store changes its papers.
var writeMethods = []string{"Upsert", "Delete", "RefreshLexical"}

// mayWrite are the packages whose non-test code may call them, each with
// the one file it may call them from ("" for any): the catalog, the stores
// themselves, the observing wrapper (storage.Observed, which passes the
// catalog's writes on to the store it observes), the stores' conformance
// suite, and the benchmark harness's synthetic index (a million made-up
// vectors into a bare embedded store, to time the store itself).
var mayWrite = map[string]string{
	"github.com/papersearch/papersearch/catalog":          "",
	"github.com/papersearch/papersearch/search/storage":   "observe.go",
	"github.com/papersearch/papersearch/search/sqlite":    "",
	"github.com/papersearch/papersearch/search/qdrant":    "",
	"github.com/papersearch/papersearch/search/storetest": "",
	"github.com/papersearch/papersearch/internal/bench":   "synthetic.go",
}

// TestOnlyTheCatalogWrites type-checks every package of the module and
// fails for a call of a store's write method (on storage.Store or on any
// type that is one) from a package that is not allowed to make it: every
// write goes through the catalog.
func TestOnlyTheCatalogWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", "./...")
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath, Dir, Export string
		GoFiles                 []string
		Module                  *struct{ Main bool }
	}
	exports := map[string]string{}
	var ours []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Main {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	storagePkg, err := imp.Import("github.com/papersearch/papersearch/search/storage")
	if err != nil {
		t.Fatal(err)
	}
	store := storagePkg.Scope().Lookup("Store").Type().Underlying().(*types.Interface)
	checked := 0
	for _, p := range ours {
		allowed, listed := mayWrite[p.ImportPath]
		if listed && allowed == "" {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp.(types.ImporterFrom)}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		checked++
		for sel, s := range info.Selections {
			if s.Kind() != types.MethodVal || !slices.Contains(writeMethods, sel.Sel.Name) {
				continue
			}
			recv := s.Recv()
			at := fset.Position(sel.Pos())
			if listed && filepath.Base(at.Filename) == allowed {
				continue
			}
			if types.Implements(recv, store) || types.Implements(types.NewPointer(recv), store) {
				t.Errorf("%s: %s writes to a store (%s.%s): writes go through the catalog",
					at, p.ImportPath, recv, sel.Sel.Name)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d packages: the module was not found", checked)
	}
}
