package embed

import (
	"context"
	_ "embed"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

//go:embed model/all-minilm-l6-v2.f16.safetensors
var minilmWeights []byte

//go:embed model/vocab.txt
var minilmVocab []byte

// Local is the in-process embedding model, all-MiniLM-L6-v2: a 6-layer BERT
// encoder producing 384-dimensional, mean-pooled, L2-normalised vectors.
// Texts longer than the model's window (256 word pieces, [CLS] and [SEP]
// included) are truncated. It runs in pure Go and needs no network. A Local
// is safe for concurrent use.
type Local struct {
	model   *bert
	tok     *Tokenizer
	workers int
	pool    sync.Pool // *scratch
}

// NewLocal loads the embedded model. workers bounds how many texts are
// encoded at once; 0 means one per CPU.
func NewLocal(workers int) (*Local, error) {
	m, err := loadBERT(minilmWeights)
	if err != nil {
		return nil, fmt.Errorf("load local model: %w", err)
	}
	tok, err := NewTokenizer(minilmVocab)
	if err != nil {
		return nil, fmt.Errorf("load local model: %w", err)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	l := &Local{model: m, tok: tok, workers: workers}
	l.pool.New = func() any { return new(scratch) }
	return l, nil
}

// Info reports the model name and its 384-dimensional output.
func (l *Local) Info() ModelInfo {
	return ModelInfo{Name: l.model.cfg.Name, Dim: l.model.cfg.Hidden}
}

// MaxTokens is the model's window in word pieces, [CLS] and [SEP] included.
func (l *Local) MaxTokens() int { return l.model.cfg.MaxSeqLength }

// Tokenizer returns the model's tokenizer.
func (l *Local) Tokenizer() *Tokenizer { return l.tok }

// Embed encodes texts on up to l.workers goroutines, longest first so the
// work stays balanced. It stops early when ctx is done.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ErrEmptyInput
	}
	dim := l.model.cfg.Hidden
	ids := make([][]int32, len(texts))
	order := make([]int, len(texts))
	for i, t := range texts {
		ids[i] = l.tok.Encode(t, l.model.cfg.MaxSeqLength)
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) > len(ids[order[b]]) })

	flat := make([]float32, len(texts)*dim)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(l.workers, len(texts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := l.pool.Get().(*scratch)
			defer l.pool.Put(s)
			for {
				n := int(next.Add(1)) - 1
				if n >= len(order) || ctx.Err() != nil {
					return
				}
				i := order[n]
				l.model.encode(ids[i], s, out[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed %d texts: %w", len(texts), err)
	}
	return out, nil
}

// CountTokens returns the word pieces texts are encoded into, [CLS] and
// [SEP] included, after truncation to the model's window.
func (l *Local) CountTokens(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(l.tok.Encode(t, l.model.cfg.MaxSeqLength))
	}
	return n
}
