package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/lexical"
)

// Document is a paper as a Store keeps it: the paper, its unit-length vector
// and the hashes that tell whether a new version of it changed.
type Document struct {
	Paper papersearch.Paper
	// Vector is the embedding of Paper.Text(), of length Store's model Dim.
	Vector []float32
	// TextHash identifies the text the vector was embedded from; PaperHash
	// identifies every field of the paper. See Fingerprint.
	TextHash  string
	PaperHash string
	// Terms, when a store keeps them, are the analysed terms of Paper.Text()
	// (see Analyze); nil otherwise.
	Terms []string
	// Sentences are the abstract's sentences with their roles and vectors
	// (see Sentence); nil for a paper stored before they were kept.
	Sentences []Sentence
}

// AnalysedTerms returns the document's analysed terms: Terms when set,
// else lexical.Analyze(Paper.Text()). The catalog sets Terms, so a text is
// analysed once on its way to a store.
func (d Document) AnalysedTerms() []string {
	if d.Terms != nil {
		return d.Terms
	}
	return lexical.Analyze(d.Paper.Text())
}

// Candidate is a document id with its score for one retrieval.
type Candidate struct {
	ID string
	// Score is the cosine similarity to the query vector, in [-1, 1], for
	// dense retrieval, and the BM25 score (0 or more) for lexical retrieval.
	Score float32
}

// Matches is the result of a lexical retrieval.
type Matches struct {
	// Candidates are the best documents by BM25 score, best first.
	Candidates []Candidate
	// Ideal is the query's ideal BM25 score (see weighTerms): what a
	// document of average length holding each query term once would score.
	Ideal float64
	// Terms are the query terms scored, heaviest first, with their
	// weights (lexical.WeighTerms).
	Terms []lexical.WeightedTerm
}

// Store keeps documents and retrieves them by vector. Implementations are
// safe for concurrent use.
type Store interface {
	// Upsert inserts or replaces documents by paper id. It returns once they
	// are durable.
	Upsert(ctx context.Context, docs []Document) error
	// Get returns the document with the given paper id, or ErrNotFound.
	Get(ctx context.Context, id string) (Document, error)
	// Lookup returns the papers of those of ids that exist, by id.
	Lookup(ctx context.Context, ids []string) (map[string]papersearch.Paper, error)
	// Vectors returns the vectors of those of ids that exist, by id: what
	// ranking a collection's papers against others reads. They may be the
	// store's own: read them, never write to them.
	Vectors(ctx context.Context, ids []string) (map[string][]float32, error)
	// Works returns the stored papers, by id, holding any of keys among
	// their work keys (papersearch.WorkKeys): the stored versions of the
	// works those keys name.
	Works(ctx context.Context, keys []string) (map[string]papersearch.Paper, error)
	// Sentences returns the sentences (roles and vectors) kept for those of
	// ids that have them; a store that keeps none (see KeepsSentences)
	// returns an error wrapping ErrNoSentences.
	Sentences(ctx context.Context, ids []string) (map[string][]Sentence, error)
	// KeepsSentences reports whether the store keeps sentence vectors: a
	// Qdrant collection created before they were kept does not.
	KeepsSentences() bool
	// Fingerprints returns the hashes stored for those of ids that exist.
	Fingerprints(ctx context.Context, ids []string) (map[string]Fingerprint, error)
	// Nearest returns up to k documents allowed by f, by descending cosine
	// similarity to the unit vector v.
	Nearest(ctx context.Context, v []float32, k int, f papersearch.Filter) ([]Candidate, error)
	// Lexical returns up to k documents allowed by f, by descending BM25
	// score for the analysed query terms (see Analyze), and the query's
	// ideal score.
	Lexical(ctx context.Context, terms []string, k int, f papersearch.Filter) (Matches, error)
	// Delete removes a document; deleting an absent id returns ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Count returns the number of documents (a store may answer from a
	// count a few seconds old).
	Count(ctx context.Context) (int, error)
	// Tags counts the documents holding each tag (a store may stop at
	// MaxTags tags).
	Tags(ctx context.Context) (map[string]int, error)
	// Ping reports, from no cache, whether the store answers now: what a
	// readiness probe asks.
	Ping(ctx context.Context) error
	// RefreshLexical brings statistics that lexical scores depend on and
	// that are fixed at write time (Qdrant's average document length) up to
	// date after a batch of writes; a store whose statistics are always
	// current does nothing.
	RefreshLexical(ctx context.Context) error
	// Scroll returns up to limit documents in a stable order, starting after
	// cursor ("" for the first page), and the cursor of the next page, ""
	// after the last.
	Scroll(ctx context.Context, cursor string, limit int) ([]Document, string, error)
	// Model reports the model whose vectors the store holds.
	Model() embed.ModelInfo
	// Kind names the implementation ("embedded", "qdrant").
	Kind() string
	Close() error
}

// CheckDimensions checks that every document's vector and sentence vectors
// have dim dimensions, naming the first that has not in an error wrapping
// ErrDimension: what a store checks before it writes anything.
func CheckDimensions(docs []Document, dim int) error {
	for _, d := range docs {
		if len(d.Vector) != dim {
			return fmt.Errorf("%s: %w: %d, want %d", d.Paper.ID, ErrDimension, len(d.Vector), dim)
		}
		for i, s := range d.Sentences {
			if len(s.Vector) != dim {
				return fmt.Errorf("%s: sentence %d: %w: %d, want %d", d.Paper.ID, i, ErrDimension, len(s.Vector), dim)
			}
		}
	}
	return nil
}

// Fingerprint is what ingest compares to decide whether a paper changed.
type Fingerprint struct {
	TextHash  string
	PaperHash string
	// Added is when the paper was first stored.
	Added time.Time
}

// FingerprintOf computes the hashes of a paper: TextHash covers the text that
// is embedded, PaperHash every field.
func FingerprintOf(p papersearch.Paper) Fingerprint {
	text := sha256.Sum256([]byte(p.Text()))
	p.Added = time.Time{}     // the store's, not the paper's
	all, _ := json.Marshal(p) // a struct of strings, ints and a time cannot fail
	whole := sha256.Sum256(all)
	return Fingerprint{TextHash: hex.EncodeToString(text[:16]), PaperHash: hex.EncodeToString(whole[:16])}
}

// CheckModel checks that an index built with stored serves vectors of
// embedder, naming both when not, in an error wrapping ErrModelMismatch;
// index says which index ("the index", "qdrant collection papers").
func CheckModel(index string, stored, embedder embed.ModelInfo) error {
	if stored == embedder {
		return nil
	}
	return fmt.Errorf("%w: %s holds %s (%d dimensions), the embedder is %s (%d dimensions)",
		ErrModelMismatch, index, stored.Name, stored.Dim, embedder.Name, embedder.Dim)
}

var (
	// ErrNotFound is returned for an unknown paper id.
	ErrNotFound = errors.New("paper not found")
	// ErrModelMismatch is returned when a store built with one embedding
	// model is opened with another.
	ErrModelMismatch = errors.New("index was built with a different embedding model")
	// ErrNoSentences is returned by a store that keeps no sentence vectors.
	ErrNoSentences = errors.New("this store keeps no sentence vectors")
	// ErrDimension is returned for a vector of the wrong length.
	ErrDimension = errors.New("vector has the wrong dimension")
	// ErrUnavailable is wrapped by errors that mean a dependency (the
	// embedder, a Qdrant server) cannot answer now; a retry later may
	// succeed. The API answers them 503 with Retry-After.
	ErrUnavailable = errors.New("a dependency is unavailable")
)

// ManyNearest is a Store that answers several dense queries in one pass
// (the embedded store): a recommendation's probes, say.
type ManyNearest interface {
	// NearestMany returns, for each vs[i], what Nearest(vs[i], ks[i], f)
	// would.
	NearestMany(ctx context.Context, vs [][]float32, ks []int, f papersearch.Filter) ([][]Candidate, error)
}

// SentenceVisitor is a Store that can show many papers' sentences one
// paper at a time, decoded into memory it reuses (the embedded store keeps
// them quantised), rather than return them all: an aspect query reads 150
// papers' sentences, about 6 MB as float32, to keep one score from each.
type SentenceVisitor interface {
	// VisitSentences calls visit with the sentences of each of ids that
	// has them, as Sentences would return them, possibly from several
	// goroutines at once. ss, and its vectors, are valid only during the
	// call.
	VisitSentences(ctx context.Context, ids []string, visit func(id string, ss []Sentence)) error
}

// TitleReader is a Store that reads papers' titles more cheaply than the
// whole papers (the embedded store stops at a row's title, before its
// vector and the pages it overflows to): the members a recommendation
// names.
type TitleReader interface {
	// Titles returns the title of each of ids that is stored.
	Titles(ctx context.Context, ids []string) (map[string]string, error)
}

// PrefixScanner is a Store whose dense scan is faster when it knows how
// many leading dimensions most queries carry, a query being zero past them
// (the embedded store keeps their codes apart): the engine tells it its
// model gate's core (search.ModelGate). The answers do not change.
type PrefixScanner interface {
	ScanPrefix(dim int)
}
