package api

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/search"
)

// MCPRelated is the input of the MCP related_for_text tool.
type MCPRelated struct {
	Text     string              `json:"text" jsonschema:"a paragraph of a draft, up to 4096 characters"`
	Filters  *papersearch.Filter `json:"filters,omitempty" jsonschema:"restrict the papers considered"`
	Limit    *int                `json:"limit,omitempty" jsonschema:"how many papers, 1 to 100 (default 10)"`
	MaxChars int                 `json:"max_chars,omitempty" jsonschema:"at most this many characters of each paper's abstract (default 600)"`
}

// RelatedHit is a paper that relates to a sentence of a draft.
type RelatedHit struct {
	ID   string `json:"id"`
	Rank int    `json:"rank"`
	// Score is the paper's reciprocal-rank fusion over the draft's
	// sentences: the sum of 1/(60 + rank) over the sentences it answers.
	Score float64           `json:"score"`
	Paper papersearch.Paper `json:"paper"`
	// DraftSentence is the sentence of the draft it ranked best for, and
	// MatchedSentence the sentence of its abstract closest to that one.
	DraftSentence   string `json:"draft_sentence"`
	MatchedSentence string `json:"matched_sentence,omitempty"`
}

// RelatedResponse is the output of the MCP related_for_text tool.
type RelatedResponse struct {
	Results []RelatedHit          `json:"results"`
	Index   papersearch.IndexInfo `json:"index"`
}

// maxDraftSentences bounds the searches one related_for_text call makes.
const maxDraftSentences = 12

// related searches each sentence of a draft paragraph and fuses the
// rankings by reciprocal rank, keeping for each paper the draft sentence
// it ranked best for and its own best sentence for that one.
func related(ctx context.Context, engine Engine, in MCPRelated) (RelatedResponse, error) {
	if err := search.ValidateText(in.Text); err != nil {
		var fe *papersearch.FieldError
		if errors.As(err, &fe) {
			fe.Field = "text"
		}
		return RelatedResponse{}, err
	}
	limit, err := search.RequestedLimit(in.Limit)
	if err != nil {
		return RelatedResponse{}, err
	}
	var filter papersearch.Filter
	if in.Filters != nil {
		filter = *in.Filters
	}
	sentences := papersearch.Sentences(in.Text)
	if len(sentences) > maxDraftSentences {
		sentences = sentences[:maxDraftSentences]
	}
	type found struct {
		hit      RelatedHit
		bestRank int
	}
	byID := map[string]*found{}
	var index papersearch.IndexInfo
	for _, s := range sentences {
		res, err := engine.Search(ctx, search.Query{Text: s, Filter: filter, Limit: limit, Explain: true})
		if err != nil {
			return RelatedResponse{}, err
		}
		index = res.Index
		for _, h := range res.Hits {
			f, ok := byID[h.ID]
			if !ok {
				f = &found{hit: RelatedHit{ID: h.ID, Paper: h.Paper}}
				byID[h.ID] = f
			}
			f.hit.Score += search.ReciprocalRank(h.Rank)
			if !ok || h.Rank < f.bestRank {
				f.bestRank, f.hit.DraftSentence = h.Rank, s
				if h.Explanation != nil {
					f.hit.MatchedSentence = h.Explanation.BestSentence
				}
			}
		}
	}
	out := RelatedResponse{Results: make([]RelatedHit, 0, len(byID)), Index: index}
	for _, f := range byID {
		out.Results = append(out.Results, f.hit)
	}
	slices.SortFunc(out.Results, func(a, b RelatedHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	out.Results = out.Results[:min(limit, len(out.Results))]
	for i := range out.Results {
		r := &out.Results[i]
		r.Rank = i + 1
		if r.Paper.Authors == nil {
			r.Paper.Authors = []string{}
		}
		r.Paper.Abstract = cut(r.Paper.Abstract, in.MaxChars)
	}
	return out, nil
}
