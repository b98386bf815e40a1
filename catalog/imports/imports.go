// Package imports owns how papers are imported: the source kinds (listed
// once, in kinds), opening the source a request names, resuming a network
// source from the checkpoint an interrupted run left in the data folder,
// and the jobs that run imports in the background for the HTTP API and
// MCP. Every import goes through catalog.Catalog.Import, the one
// pipeline. The command line and the API map their input to a Request and
// report what comes back; neither knows a source by name.
package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/atomicfile"
	"github.com/papersearch/papersearch/seeds/arxiv"
	"github.com/papersearch/papersearch/seeds/bibtex"
	"github.com/papersearch/papersearch/seeds/csl"
	"github.com/papersearch/papersearch/seeds/fetch"
	"github.com/papersearch/papersearch/seeds/openalex"
	"github.com/papersearch/papersearch/seeds/openreview"
)

// kind is one source an import reads.
type kind struct {
	name string
	// file: it reads a file (a command's FILE, a request's content);
	// else it asks a network API for its target.
	file bool
	// http: POST /v1/imports offers it (arXiv's snapshot, gigabytes, is
	// for the command line only).
	http bool
	// bounded: Request.Max bounds how many papers it reads.
	bounded bool
	usage   string
	open    func(ctx context.Context, c Config, r Request) (catalog.Source, []string)
	// since, for a network source a watch reads by date, narrows a target
	// to what the source dates on or after a day; nil for one a watch
	// reads on from the position where its last run ended.
	since func(target, day string) string
}

// kinds are the sources, in the order help lists them.
var kinds = []kind{ // read-only
	{name: "bibtex", file: true, http: true, usage: "bibtex FILE (a .bib export)",
		open: func(_ context.Context, _ Config, r Request) (catalog.Source, []string) {
			return bibtex.NewReader(r.File), nil
		}},
	{name: "csl", file: true, http: true, usage: "csl FILE (CSL-JSON, Zotero's native export)",
		open: func(_ context.Context, _ Config, r Request) (catalog.Source, []string) {
			return csl.NewReader(r.File), nil
		}},
	{name: "arxiv-snapshot", file: true, usage: "arxiv-snapshot FILE [--category C]... (arXiv's metadata snapshot; files may be .gz)",
		open: func(_ context.Context, _ Config, r Request) (catalog.Source, []string) {
			return arxiv.NewSnapshotReader(r.File, r.Categories...), []string{"arxiv"}
		}},
	{name: "arxiv", http: true, bounded: true, usage: "arxiv QUERY [--max N] (arXiv's API, e.g. 'cat:cs.LG AND ti:diffusion')",
		open: func(ctx context.Context, c Config, r Request) (catalog.Source, []string) {
			return arxiv.NewAPIReader(ctx, c.client("arXiv", arxiv.RequestSpacing), c.ArxivURL, r.Target, r.Max), []string{"arxiv"}
		},
		since: arxiv.Since},
	{name: "openalex", http: true, bounded: true, usage: "openalex FILTER [--max N] (e.g. 'concepts.id:C154945302,publication_year:2026')",
		open: func(ctx context.Context, c Config, r Request) (catalog.Source, []string) {
			return openalex.NewReader(ctx, c.client("OpenAlex", 0), c.OpenAlexURL, r.Target, c.OpenAlexEmail, r.Max), []string{"openalex"}
		},
		since: openalex.Since},
	{name: "openreview", http: true, usage: "openreview VENUE_ID (e.g. NeurIPS.cc/2026/Conference)",
		open: func(ctx context.Context, c Config, r Request) (catalog.Source, []string) {
			var tags []string
			if tag := openreview.DefaultTag(r.Target); tag != "" {
				tags = append(tags, tag)
			}
			return openreview.NewReader(ctx, c.client("OpenReview", 0), c.OpenReviewURL, r.Target), tags
		}},
}

// lookup returns the kind of that name.
func lookup(name string) (kind, bool) {
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		return kind{}, false
	}
	return kinds[i], true
}

// Usage lists the sources and what each takes, for a command's help.
func Usage() string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.usage
	}
	return Names(parts)
}

// IsFile reports whether the source of that name reads a file, and
// whether there is such a source.
func IsFile(name string) (file, ok bool) {
	k, ok := lookup(name)
	return k.file, ok
}

// Bounded reports whether Request.Max bounds the papers the source of
// that name reads.
func Bounded(name string) bool {
	k, _ := lookup(name)
	return k.bounded
}

// HTTPSources names the sources POST /v1/imports takes.
func HTTPSources() []string { return sources(func(k kind) bool { return k.http }) }

// NetworkSources names the sources that ask a network API for a target
// (the others read a file); each keeps a checkpoint to resume from.
func NetworkSources() []string { return sources(func(k kind) bool { return !k.file }) }

// UploadSources names the file sources POST /v1/imports takes, the file
// in its content.
func UploadSources() []string { return sources(func(k kind) bool { return k.http && k.file }) }

// sources names the kinds that keep holds for, in the order help lists
// them: the one list of sources every other list (the OpenAPI document's
// enums, the MCP tool's description, the command line's help) is made
// from or checked against.
func sources(keep func(kind) bool) []string {
	var out []string
	for _, k := range kinds {
		if keep(k) {
			out = append(out, k.name)
		}
	}
	return out
}

// Names joins names as a sentence does: "a, b or c".
func Names(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// UserAgent introduces papersearch to the APIs it imports from.
const UserAgent = "papersearch (+https://github.com/papersearch/papersearch)"

// Config says where the network sources are and where checkpoints go.
type Config struct {
	// DataDir holds the checkpoints, under imports/.
	DataDir string
	// Store names the store imported into ("embedded /path", "qdrant URL
	// collection"): a checkpoint is kept per store.
	Store                                string
	ArxivURL, OpenAlexURL, OpenReviewURL string
	OpenAlexEmail                        string
	Log                                  *slog.Logger
	// Clients, if set, are shared by the imports opened through this
	// Config, one per source, so that a source's rate limit holds across
	// imports and watches running at once; nil: each import has its own.
	Clients *Clients
}

// Clients are the HTTP clients of the network sources, one per source.
// Make them with NewClients.
type Clients struct {
	mu sync.Mutex
	m  map[string]*fetch.Client
}

// NewClients returns an empty set of clients.
func NewClients() *Clients { return &Clients{m: map[string]*fetch.Client{}} }

// client returns the client of the source name, spacing its requests by
// every (0: no limit).
func (c Config) client(name string, every time.Duration) *fetch.Client {
	newClient := func() *fetch.Client {
		cl := fetch.New(name, every)
		cl.UserAgent, cl.Log = UserAgent, c.Log
		return cl
	}
	if c.Clients == nil {
		return newClient()
	}
	c.Clients.mu.Lock()
	defer c.Clients.mu.Unlock()
	if c.Clients.m[name] == nil {
		c.Clients.m[name] = newClient()
	}
	return c.Clients.m[name]
}

// Request is one import: which source, what it reads, and how.
type Request struct {
	Kind string
	// Target is what a network source is asked for: a query, a filter, a
	// venue id. File is what a file source reads.
	Target string
	File   io.Reader
	// Categories keep arxiv-snapshot's records with a category starting
	// with one of them.
	Categories []string
	// Max bounds the papers of an arxiv or openalex import.
	Max int
	// Tags go on every paper, beside the source's own.
	Tags []string
	// Restart reads a network source from its start, not after what an
	// interrupted run of the same import stored.
	Restart bool
	// Of names whose import this is, when not the user's (a watch's id):
	// its checkpoint is its own, so two watches of one target, or a watch
	// and an import of it, never resume from each other's.
	Of string
}

// ErrBadRequest is wrapped by the *papersearch.FieldError of a request
// that names no usable source; Field is the request's field at fault.
var ErrBadRequest = errors.New("invalid import request")

func badRequest(field, reason string) error {
	return &papersearch.FieldError{Field: field, Reason: reason, Err: ErrBadRequest}
}

// Opened is a source opened for an import.
type Opened struct {
	Source catalog.Source
	// Tags are the request's and the source's own, cleaned.
	Tags []string
	// ResumedAt is the position an interrupted run of the same import
	// ended at, where Source starts ("" from the start).
	ResumedAt string
}

// Open opens the source r names. A network source is resumable: the same
// import (source, target, max, tags, store) run again starts after what
// it stored, unless r.Restart.
func (c Config) Open(ctx context.Context, r Request) (Opened, error) {
	k, ok := lookup(r.Kind)
	if !ok {
		return Opened{}, badRequest("source", fmt.Sprintf("must be one of the sources, not %q: %s", r.Kind, Usage()))
	}
	tags, ok := papersearch.CleanTags(r.Tags)
	if !ok {
		return Opened{}, badRequest("tags", "must be valid: "+papersearch.ErrBadTag.Error())
	}
	src, own := k.open(ctx, c, r)
	tags, _ = papersearch.CleanTags(slices.Concat(tags, own))
	src, at, err := c.resume(r, tags, src)
	if err != nil {
		return Opened{}, err
	}
	if at != "" && c.Log != nil {
		c.Log.Info("import resumes after an interrupted run", "source", r.Kind, "target", r.Target, "position", at)
	}
	return Opened{Source: src, Tags: tags, ResumedAt: at}, nil
}

// positioned is a network source that can say where it stands and start
// again there (the arXiv API, OpenAlex and OpenReview readers).
type positioned interface {
	catalog.Source
	Position() string
	Seek(pos string) error
}

// checkpointFile is what a resumable import keeps between runs.
type checkpointFile struct {
	Source   string    `json:"source"`
	Target   string    `json:"target"`
	Position string    `json:"position"`
	Updated  time.Time `json:"updated"`
}

// resumable is a network source whose position is written to a file in
// the data folder after each stored batch, so that the same import run
// again starts after what it stored instead of fetching it again. The file
// goes once the source is read to its end.
type resumable struct {
	positioned
	path string
	file checkpointFile
}

// Checkpoint records the source's position, or removes the record once
// the import is done.
func (r *resumable) Checkpoint(_ context.Context, done bool) error {
	if done {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	r.file.Position, r.file.Updated = r.positioned.Position(), time.Now().UTC()
	b, err := json.Marshal(r.file)
	if err != nil {
		return err
	}
	return atomicfile.Write(r.path, b, 0o644)
}

// resume makes src resumable when it is a network source: an import of
// the same source, target, max and tags (cleaned) into the same store,
// interrupted before, continues where its last stored batch ended (unless
// r.Restart). It returns the source and the position resumed at ("" from
// the start).
func (c Config) resume(r Request, tags []string, src catalog.Source) (catalog.Source, string, error) {
	p, ok := src.(positioned)
	if !ok {
		return src, "", nil
	}
	tags = slices.Clone(tags)
	for i, t := range tags {
		tags[i] = strings.ToLower(t)
	}
	slices.Sort(tags)
	key := []string{r.Kind, r.Target, fmt.Sprint(r.Max), strings.Join(tags, ","), c.Store}
	if r.Of != "" {
		key = append(key, r.Of)
	}
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	res := &resumable{positioned: p, path: filepath.Join(c.DataDir, "imports", hex.EncodeToString(sum[:8])+".json"),
		file: checkpointFile{Source: r.Kind, Target: r.Target}}
	if r.Restart {
		return res, "", nil
	}
	b, err := os.ReadFile(res.path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the checkpoint of this import: %w", err)
	}
	var saved checkpointFile
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, "", fmt.Errorf("read the checkpoint of this import (%s): %w; a restart ignores it", res.path, err)
	}
	if err := p.Seek(saved.Position); err != nil {
		return nil, "", fmt.Errorf("%w; a restart ignores the checkpoint %s", err, res.path)
	}
	return res, saved.Position, nil
}
