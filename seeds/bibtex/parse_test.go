package bibtex

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/latex"
)

// theirLibrary is a BibTeX file as a Python library, which nobody here
// wrote, reads it.
type theirLibrary struct {
	Failed  int      // blocks or names it could not read
	Errors  []string // the first few of them
	Entries []struct {
		Type, Key string
		Fields    map[string]string // as written, outer braces or quotes removed
		Authors   [][4]string       // each name's first, von, last and jr parts
	}
}

// pythonReaders are the Python BibTeX libraries the export is read with:
// the check that they are installed, and a script that reads a file from
// standard input and prints it as a theirLibrary.
var pythonReaders = map[string]struct{ check, script string }{
	"bibtexparser": {`import bibtexparser; assert bibtexparser.__version__.startswith("2.")`, `
import sys, json, bibtexparser
from bibtexparser.middlewares.names import split_multiple_persons_names, parse_single_name_into_parts
lib = bibtexparser.parse_string(sys.stdin.buffer.read().decode("utf-8"))
errors = [str(getattr(b, "error", b)) for b in lib.failed_blocks]
def authors(e):
    out = []
    if "author" in e.fields_dict:
        for name in split_multiple_persons_names(e.fields_dict["author"].value):
            try:
                p = parse_single_name_into_parts(name)
                out.append([" ".join(p.first), " ".join(p.von), " ".join(p.last), " ".join(p.jr)])
            except Exception as err:
                errors.append("%s: %r" % (e.key, err))
                out.append(["", "", "", ""])
    return out
entries = [{"type": e.entry_type, "key": e.key, "fields": {f.key: f.value for f in e.fields}, "authors": authors(e)} for e in lib.entries]
json.dump({"failed": len(errors), "errors": errors[:20], "entries": entries}, sys.stdout)
`},
	"pybtex": {`import pybtex.database`, `
import sys, json, pybtex.errors
from pybtex.database import parse_string
try:
    with pybtex.errors.capture() as errors:
        bib = parse_string(sys.stdin.buffer.read().decode("utf-8"), "bibtex")
    errors = [str(e) for e in errors]
except Exception as err:
    json.dump({"failed": 1, "errors": [repr(err)], "entries": []}, sys.stdout)
    sys.exit(0)
def parts(p):
    return [" ".join(p.first_names + p.middle_names), " ".join(p.prelast_names), " ".join(p.last_names), " ".join(p.lineage_names)]
entries = [{"type": e.type, "key": key, "fields": {k.lower(): str(v) for k, v in e.fields.items()},
            "authors": [parts(p) for p in e.persons.get("author", [])]} for key, e in bib.entries.items()]
json.dump({"failed": len(errors), "errors": errors[:20], "entries": entries}, sys.stdout)
`},
}

// needPython stops t (testenv.Missing) unless python3 has every library
// named.
func needPython(t *testing.T, libraries ...string) {
	t.Helper()
	for _, name := range libraries {
		if exec.Command("python3", "-c", pythonReaders[name].check).Run() != nil {
			testenv.Missing(t, "python3 with %s is not installed (scripts/test installs it: pip install 'bibtexparser==2.*' pybtex)", name)
		}
	}
}

// readWith has the Python library name read a BibTeX file.
func readWith(name, bib string) (theirLibrary, error) {
	cmd := exec.Command("python3", "-c", pythonReaders[name].script)
	cmd.Stdin = strings.NewReader(bib)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return theirLibrary{}, fmt.Errorf("%s: %v\n%s", name, err, stderr.String())
	}
	var lib theirLibrary
	return lib, json.Unmarshal(out, &lib)
}

// TestFormatReadByBibtexparser: Python's bibtexparser parses the export of
// the hostile papers into the same entries, keys and raw field values as
// the Reader does.
func TestFormatReadByBibtexparser(t *testing.T) {
	needPython(t, "bibtexparser")
	var file strings.Builder
	for _, p := range hostile {
		file.WriteString(Format(p) + "\n")
	}
	theirs, err := readWith("bibtexparser", file.String())
	if err != nil {
		t.Fatal(err)
	}
	ours, err := collectEntries(file.String())
	if err != nil || theirs.Failed != 0 || len(theirs.Entries) != len(hostile) || len(ours) != len(hostile) {
		t.Fatalf("bibtexparser: %d entries, %d failed %q; ours %d (%v); want %d\n%s", len(theirs.Entries), theirs.Failed, theirs.Errors, len(ours), err, len(hostile), file.String())
	}
	for i, e := range theirs.Entries {
		o := ours[i]
		if e.Key != o.Key || e.Type != o.Type || len(e.Fields) != len(o.Fields) {
			t.Errorf("entry %d: bibtexparser %s %s %d fields, ours %s %s %d", i, e.Type, e.Key, len(e.Fields), o.Type, o.Key, len(o.Fields))
		}
		for name, v := range o.Fields {
			if got := e.Fields[name]; got != v {
				t.Errorf("entry %d field %s: bibtexparser %q, ours %q", i, name, got, v)
			}
		}
	}
}

// TestExportParsesEverywhere exports every paper of the shared ML corpus
// (read by the project's JSONL reader, and so through papersearch.Complete)
// and the NeurIPS 2026 seeds as one file, which bibtexparser 2 and pybtex
// each read whole: no block fails, every entry is there under its key,
// every name splits into a first and a last name (a name of one word into
// a last name), the note gives back the id's path segment as written, and
// every formula is in its field as LaTeX maths that keeps its commands (or,
// where EncodeMath refuses it, as its source in text).
func TestExportParsesEverywhere(t *testing.T) {
	needPython(t, "bibtexparser", "pybtex")
	papers := testenv.MLPapers(t, 0)
	neurips, err := seeds.NeurIPS2026()
	if err != nil {
		t.Fatal(err)
	}
	papers = append(papers, neurips...)
	var file strings.Builder
	for _, p := range papers {
		file.WriteString(Format(p) + "\n")
	}
	libs := map[string]theirLibrary{}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for name := range pythonReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			lib, err := readWith(name, file.String())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			libs[name] = lib
			t.Logf("%s read %d bytes in %v", name, file.Len(), time.Since(start).Round(time.Millisecond))
		}()
	}
	wg.Wait()
	failures := 0
	fail := func(format string, args ...any) {
		if failures++; failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for name, lib := range libs {
		if lib.Failed != 0 || len(lib.Entries) != len(papers) {
			t.Errorf("%s: %d entries of %d, %d failed: %q", name, len(lib.Entries), len(papers), lib.Failed, lib.Errors)
			continue
		}
		authors, split := 0, 0
		for i, e := range lib.Entries {
			p := papers[i]
			if e.Key != Key(p) || e.Fields["note"] != noteID(p.ID) {
				fail("%s: entry %d is %s with note %q, want %s with %q", name, i, e.Key, e.Fields["note"], Key(p), noteID(p.ID))
			}
			names := writtenNames(p)
			if len(e.Authors) != len(names) {
				fail("%s: %s has %d authors, want %d", name, e.Key, len(e.Authors), len(names))
				continue
			}
			for j, parts := range e.Authors {
				authors++
				words := len(strings.Fields(plain(names[j])))
				if words >= 2 {
					split++
				}
				if parts[2] == "" || words >= 2 && parts[0] == "" {
					fail("%s: %s: %q (%s) split as first %q, last %q", name, e.Key, names[j], Name(names[j]), parts[0], parts[2])
				}
			}
		}
		t.Logf("%s: %d entries, %d failed blocks; %d authors, all %d of two words or more split into a first and a last name", name, len(lib.Entries), lib.Failed, authors, split)
	}
	if lib, ok := libs["bibtexparser"]; ok && len(lib.Entries) == len(papers) {
		formulas, asSource := 0, 0
		for i, p := range papers {
			for field, text := range map[string]string{"title": p.Title, "abstract": p.Abstract} {
				for _, sp := range latex.Spans(text) {
					if !sp.Math {
						continue
					}
					formulas++
					enc, ok := latex.EncodeMath(sp.Text)
					want := sp.Open + enc + sp.Close
					if !ok {
						asSource++
						want = latex.Encode(sp.Open + sp.Text + sp.Close)
					}
					if got := lib.Entries[i].Fields[field]; !strings.Contains(got, want) {
						fail("%s %s: %q not in %q", papers[i].ID, field, want, got)
					}
					if lost := lostCommands(sp.Text, enc); ok && lost != nil {
						fail("%s: %q written as %q lost %q", p.ID, sp.Text, enc, lost)
					}
				}
			}
		}
		t.Logf("maths: %d formulas, %d written as LaTeX maths, %d refused and written as their source", formulas, formulas-asSource, asSource)
	}
}

// writtenNames are a paper's authors that Name writes (those with words).
func writtenNames(p papersearch.Paper) []string {
	var names []string
	for _, a := range p.Authors {
		if Name(a) != "" {
			names = append(names, firstNameFirst(a))
		}
	}
	return names
}

// firstNameFirst is a stored name as the Reader reads its export back: a
// name written with BibTeX's commas ("Erdős, Paul") first name first
// ("Paul Erdős"), any other as it is.
func firstNameFirst(name string) string {
	p := splitStored(name)
	if !p.turned {
		return name
	}
	words := slices.Concat(p.first, p.von, []string{p.last})
	if p.jr != "" {
		words = append(words, p.jr)
	}
	return strings.Join(words, " ")
}

// lostCommands are the commands of a formula's source that its LaTeX
// lacks: each is there, run (\sqrt) or shown (\textbackslash{}eps).
func lostCommands(src, enc string) []string {
	have := map[string]bool{}
	for _, c := range commandNames(enc) {
		have[c] = true
	}
	for _, m := range shownCommand.FindAllStringSubmatch(enc, -1) {
		have[m[1]] = true
	}
	var lost []string
	for _, c := range commandNames(src) {
		if !have[c] {
			lost = append(lost, `\`+c)
		}
	}
	return lost
}

// commandNames are the names of the control words of LaTeX source (\\ is
// none: "\\beta" holds no \beta).
func commandNames(s string) []string {
	var names []string
	for _, m := range controlSequence.FindAllStringSubmatch(s, -1) {
		if c := m[1][0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			names = append(names, m[1])
		}
	}
	return names
}

var (
	controlSequence = regexp.MustCompile(`\\([A-Za-z]+|.)`)
	shownCommand    = regexp.MustCompile(`\\textbackslash\{\}([A-Za-z]+)`)
)
