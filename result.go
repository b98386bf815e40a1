package papersearch

import "time"

// Hit is one ranked result.
type Hit struct {
	ID          string       `json:"id"`
	Rank        int          `json:"rank"` // 1-based, across pages
	Score       float64      `json:"score"`
	Paper       Paper        `json:"paper"`
	Explanation *Explanation `json:"explanation,omitempty"`
	// Because, on a recommendation, names the members of the collection
	// the paper is nearest to, nearest first.
	Because []Neighbour `json:"because,omitempty"`
}

// Neighbour is a paper a result is near: a member of the collection it was
// recommended for, and the cosine similarity of their vectors.
type Neighbour struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	Similarity float32 `json:"similarity"`
}

// Explanation says why a paper was returned.
type Explanation struct {
	// DenseRank and LexicalRank are the paper's 1-based places in the dense
	// and lexical candidate lists, 0 when absent; the scores are those
	// lists' scores (cosine similarity, BM25).
	DenseRank    int      `json:"dense_rank"`
	DenseScore   *float32 `json:"dense_score,omitempty"`
	LexicalRank  int      `json:"lexical_rank"`
	LexicalScore *float32 `json:"lexical_score,omitempty"`
	// MatchedTerms are the query's words found in the paper (after
	// stemming: "networks" matches "network").
	MatchedTerms []string `json:"matched_terms"`
	// BestSentence is the abstract sentence closest to the query.
	BestSentence string `json:"best_sentence,omitempty"`
	// SentenceMatch, in an aspect similarity, is the query paper's
	// sentence and this paper's that matched best.
	SentenceMatch *SentenceMatch `json:"sentence_match,omitempty"`
}

// SentenceMatch is a pair of sentences that matched: one of the query
// paper, one of the result, and the cosine similarity of their vectors.
type SentenceMatch struct {
	Query      MatchedSentence `json:"query"`
	Result     MatchedSentence `json:"result"`
	Similarity float32         `json:"similarity"`
}

// MatchedSentence is one sentence of an abstract: its place (0-based), its
// rhetorical role (background, method, result, other) and its text. The
// query text of a search is role "query", and a paper matched as a whole
// (it had no sentence vectors) role "paper" with its title; both have
// index -1.
type MatchedSentence struct {
	Index int    `json:"index"`
	Role  string `json:"role"`
	Text  string `json:"text"`
}

// IndexInfo describes the index that answered a query.
type IndexInfo struct {
	Store  string `json:"store"`
	Model  string `json:"model"`
	Dim    int    `json:"dim"`
	Papers int    `json:"papers"`
}

// Collection is a tag and how many papers hold it: the papers a user
// gathered under one name ("my-library") or an import's source
// ("neurips-2026").
type Collection struct {
	Tag    string `json:"tag"`
	Papers int    `json:"papers"`
	// NotInterested counts the papers marked not interested for the
	// collection (NotInterestedTag), which its recommendations avoid.
	NotInterested int `json:"not_interested,omitempty"`
}

// IngestSummary counts what an ingest did with each paper it was given.
type IngestSummary struct {
	New       int `json:"new"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Duplicates counts papers given more than once in the same ingest;
	// the last one of each id counts.
	Duplicates int `json:"duplicates"`
	// Embedded counts the papers whose text was embedded; Reused those
	// whose stored vector was kept because their text had not changed.
	Embedded int           `json:"embedded"`
	Reused   int           `json:"reused"`
	Took     time.Duration `json:"-"`
}

// Add adds o's counts to s's (Took is left alone).
func (s *IngestSummary) Add(o IngestSummary) {
	s.New += o.New
	s.Updated += o.Updated
	s.Unchanged += o.Unchanged
	s.Duplicates += o.Duplicates
	s.Embedded += o.Embedded
	s.Reused += o.Reused
}
