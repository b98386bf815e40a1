package imports

import (
	"time"

	"github.com/papersearch/papersearch"
)

// The import jobs' and watches' own types: what a client asks for and
// what it is answered, as the service keeps them (their JSON is the
// form records hold). The API answers them as its wire types, converted
// at its edge.

// JobRequest asks for an import run in the background (Jobs.Start).
type JobRequest struct {
	// Source is one of Sources(); Target is what a network source is
	// asked for, Content the file of a bibtex or csl import.
	Source  string `json:"source"`
	Target  string `json:"target,omitempty"`
	Content string `json:"content,omitempty"`
	// Max bounds the papers of a bounded source (default DefaultPapers).
	Max  *int     `json:"max,omitempty"`
	Tags []string `json:"tags,omitempty"`
}

// Job is an import running or finished.
type Job struct {
	ID     string   `json:"id"`
	Source string   `json:"source"`
	Target string   `json:"target,omitempty"`
	Tags   []string `json:"tags"`
	// Status is "running", "done", "cancelled" or "failed" (Error says
	// why, in words that name no internals).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Read counts the source's records so far, Stored the papers ingested,
	// Rejected the records that made no paper (NoAbstract of them for
	// lack of an abstract), the first of them listed in Rejections, and
	// Merged the records that joined a paper stored under another id.
	Read       int         `json:"read"`
	Stored     int         `json:"stored"`
	Rejected   int         `json:"rejected"`
	NoAbstract int         `json:"no_abstract"`
	Merged     int         `json:"merged"`
	Rejections []Rejection `json:"rejections"`
	// Embedded counts the papers embedded so far, those of the batch in
	// hand included: it moves while a batch is embedded, before the batch
	// is stored whole (papers stored before with the same text need none).
	Embedded int `json:"embedded"`
	// Summary is the ingest's, once the import is done.
	Summary    *papersearch.IngestSummary `json:"summary,omitempty"`
	StartedAt  time.Time                  `json:"started_at"`
	FinishedAt *time.Time                 `json:"finished_at,omitempty"`
}

// Rejection is a record an import could not make a paper of: its place
// in the source and why.
type Rejection struct {
	Record int    `json:"record"`
	Detail string `json:"detail"`
}

// WatchRequest asks for a network source to be imported from every
// period, each run going on from where the last ended (Watches.Add).
type WatchRequest struct {
	Source string `json:"source"`
	Target string `json:"target"`
	// Every is the period between runs (default DefaultWatchEvery).
	Every *string  `json:"every,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	// Max bounds the papers of one run (default DefaultPapers).
	Max *int `json:"max,omitempty"`
	// Since is the first day the first run reads from, for the sources
	// read by date.
	Since *string `json:"since,omitempty"`
}

// Watch is a watched source: its request with the defaults filled, where
// its next run goes on from, and how its runs went.
type Watch struct {
	ID      string    `json:"id"`
	Source  string    `json:"source"`
	Target  string    `json:"target"`
	Every   string    `json:"every"`
	Tags    []string  `json:"tags"`
	Max     int       `json:"max"`
	Created time.Time `json:"created"`
	// Since, for a source read by date, is the day the next run reads
	// from; Position, for one read in order, where it goes on.
	Since    string `json:"since,omitempty"`
	Position string `json:"position,omitempty"`
	// Running says a run is under way in some process; NextRun is when
	// the next one is due.
	Running bool      `json:"running"`
	NextRun time.Time `json:"next_run"`
	// Runs counts the runs that ended; the Last fields are the latest's.
	Runs         int        `json:"runs"`
	LastStarted  *time.Time `json:"last_started,omitempty"`
	LastFinished *time.Time `json:"last_finished,omitempty"`
	LastRead     int        `json:"last_read"`
	LastAdded    int        `json:"last_added"`
	LastError    string     `json:"last_error,omitempty"`
}
