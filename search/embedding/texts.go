package embedding

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/papersearch/papersearch/embed"
)

// ErrUnknownModel is returned by Embed for a model not in List.
var ErrUnknownModel = errors.New("no such model here")

// Embed embeds texts as given with the named model (one of List; "" for
// the index's) and returns the vectors and the tokens they cost. While
// the embedder is found failing it fails at once with ErrUnavailable (see
// Options.BreakerCooldown), and its own failure to get an answer in time
// makes the breaker find so.
func (m *Models) Embed(ctx context.Context, model string, texts []string) ([][]float32, int, error) {
	emb := m.whole
	if model != "" {
		i := slices.IndexFunc(m.byModel, func(e embed.Embedder) bool { return e.Info().Name == model })
		if i < 0 {
			return nil, 0, fmt.Errorf("%w: %q", ErrUnknownModel, model)
		}
		emb = m.byModel[i]
	}
	// Each distinct text is embedded once.
	var unique []string
	at := make(map[string]int, len(texts))
	for _, t := range texts {
		if _, ok := at[t]; !ok {
			at[t] = len(unique)
			unique = append(unique, t)
		}
	}
	tokens := embed.CountTokens(emb, unique)
	if limit := m.maxTokens; limit > 0 && tokens > limit {
		return nil, tokens, &TokenLimitError{Tokens: tokens, Limit: limit}
	}
	var vecs [][]float32
	err := m.breaker.wait(ctx, func() (err error) {
		vecs, err = emb.Embed(ctx, unique)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = vecs[at[t]]
	}
	return out, tokens, nil
}

// TokenLimitError is an Embed call whose distinct texts hold more tokens
// than Options.MaxTokens allows.
type TokenLimitError struct{ Tokens, Limit int }

func (e *TokenLimitError) Error() string {
	return fmt.Sprintf("the inputs hold %d tokens (their distinct texts, as the model counts them); at most %d fit in one request: send fewer inputs per request",
		e.Tokens, e.Limit)
}

// DefaultMaxTokens is Options.MaxTokens's default: about 500
// abstracts, twice the estimated tokens another papersearch sends in one
// request (embed.OpenAIConfig's default BatchTokens), so its batches pass.
const DefaultMaxTokens = 131072
