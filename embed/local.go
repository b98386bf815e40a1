package embed

import (
	"context"
	_ "embed" // the models' weights
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The weights of every local model the binary carries, one
// <name>.f16.safetensors file each (written by scripts/convert_model.py or
// scripts/convert_onnx_model.py), and the WordPiece vocabulary they share.
// Each is a string, read where the binary maps it (see weightsOf): loading
// copies none of it, and its pages are given back once the model's layers
// are packed; a row of word embeddings is copied out the first time a text
// uses its word, and the pages it brought back given back again (see
// wordTable).
var (
	//go:embed model/all-minilm-l6-v2.f16.safetensors
	miniLMWeights string
	//go:embed model/bge-small-en-v1.5.f16.safetensors
	bgeWeights string
	//go:embed model/e5-small-v2.f16.safetensors
	e5Weights string
	//go:embed model/vocab.txt
	vocabText string
)

// DefaultLocalModel is the local model used unless another is chosen:
// bge-small-en-v1.5, e5-small-v2 and all-MiniLM-L6-v2 as one (see Pair and
// OpenLocal). The first two rank most queries; the search engine lets the
// third join the questions whose words the papers barely hold (see
// search.ModelGate), which measured best on the project's dev signals and
// their held-out halves (docs/ranking.md).
const DefaultLocalModel = "bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2"

// weightsOf is an embedded weights file's bytes where the binary maps
// them, without a copy. They are read-only: writing to them faults.
func weightsOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// localModel is one local model's weights file and what its int8
// arithmetic keeps in float32.
type localModel struct {
	weights *string
	// exactFFNOut keeps the feed-forward output layers out of int8 when
	// the other dense layers run in it: in bfloat16 where the CPU has a
	// bf16 kernel, else in float32. Their inputs, GELU's outputs, are the
	// hardest to quantise (most near zero, a long tail); all-MiniLM-L6-v2
	// (six layers, distilled) loses the most there: a blank text's vector
	// falls to cosine 0.9938 to float32 with them in int8, 0.9973 without.
	exactFFNOut bool
}

// localFiles maps each local model's name to its file and settings.
var localFiles = map[string]localModel{ // read-only
	"all-MiniLM-L6-v2":  {weights: &miniLMWeights, exactFFNOut: true},
	"bge-small-en-v1.5": {weights: &bgeWeights},
	"e5-small-v2":       {weights: &e5Weights},
}

// LocalModels lists the names of the local models, sorted.
func LocalModels() []string {
	names := make([]string, 0, len(localFiles))
	for n := range localFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ErrUnknownModel is returned for a local model the binary does not carry.
var ErrUnknownModel = errors.New("no such local model")

// ErrNoBF16 is returned when bfloat16 is asked of a CPU without AVX-512
// BF16.
var ErrNoBF16 = errors.New("this CPU has no AVX-512 BF16 instructions; use fp32 or auto")

// Precision is the arithmetic of a local model's dense layers.
type Precision string

const (
	// PrecisionAuto measures, when the model loads, every kernel this CPU
	// has for each arithmetic on the model's own dense layers and
	// attention and keeps the fastest, a less exact arithmetic only when
	// preferMargin times faster than the more exact (Local.Choice reports
	// what it measured). An arithmetic asked for by name runs on its
	// fastest kernels, measured alike.
	PrecisionAuto Precision = "auto"
	// PrecisionFP32 is float32 throughout: the reference.
	PrecisionFP32 Precision = "fp32"
	// PrecisionBF16 rounds the dense layers' weights and inputs to
	// bfloat16 and accumulates in float32 (twice the float32 rate, half the
	// weight memory); attention, softmax, GELU and LayerNorm stay float32.
	PrecisionBF16 Precision = "bf16"
	// PrecisionInt8 quantises the dense layers' weights to 7 bits per
	// output channel and their inputs to 8 bits per token (a few outlier
	// channels apart, in float32), multiplies in integers (AMX's TDPBUSD
	// where Linux grants it, on an Intel Xeon 1.4–1.6 times bf16's rate on
	// AMX; AVX-512 VNNI's VPDPBUSD, on an AMD Zen 4 3.6 times the float32
	// rate; else AVX2's VPMADDUBSW, on an AMD Zen 3 1.8 times) and scales
	// the sums back to float32; softmax, GELU and LayerNorm stay float32,
	// attention is chosen on its own (float32, or bf16 where measured
	// faster), and all-MiniLM-L6-v2's feed-forward output layers are bf16
	// where the CPU has it, else float32.
	PrecisionInt8 Precision = "int8"
)

// LocalOptions tune a local model; the zero value is the default.
type LocalOptions struct {
	// Workers bounds how many texts are encoded at once; 0 means one per
	// CPU.
	Workers int
	// Precision is the dense layers' arithmetic; "" means PrecisionAuto.
	Precision Precision
	// ChoiceFile, when set, is where PrecisionAuto keeps its measurement
	// for every process of the machine (DefaultChoicePath): a model whose
	// choice it records for this CPU and build takes it as it is, so that
	// processes started under different loads never encode in different
	// arithmetics; delete it to measure again. Empty measures every time.
	ChoiceFile string
	// Logger reports a choice file that could not be read or written (the
	// choice is then this process's own); nil discards it.
	Logger *slog.Logger
	// measured, when set, is the rates to choose from for a model of its
	// shape instead of measuring (a Pair's later models take the first's).
	measured *measurement
	// tokenizer, when set, is the vocabulary's tokenizer to use (a Pair's
	// models share the first's: they share the vocabulary).
	tokenizer *Tokenizer
}

// Local is an in-process embedding model: a BERT encoder producing
// L2-normalised vectors (all-MiniLM-L6-v2: 6 layers, 384 dimensions, mean
// pooled, a 256-word-piece window; bge-small-en-v1.5: 12 layers, 384
// dimensions, CLS pooled, a 512-word-piece window). Texts longer than the
// model's window ([CLS] and [SEP] included) are truncated. It runs in pure Go and needs no network. A Local
// is safe for concurrent use.
type Local struct {
	model   *bert
	tok     *Tokenizer
	workers int
	pool    sync.Pool // *scratch
	// busy counts the texts (or packs of them) being encoded at this
	// moment, by this model and by any it shares its cores with (the
	// other models of a Pair): a text's layers are split across the cores
	// only when there are fewer than l.workers.
	busy *atomic.Int64
	// pack holds the short foreground texts waiting to be packed into
	// one encode (encodePacked).
	pack packer
}

// NewLocal loads the default local model; see NewLocalModel.
func NewLocal(opts LocalOptions) (Embedder, error) { return OpenLocal(DefaultLocalModel, opts) }

// NewLocalModel loads the embedded model of that name (one of LocalModels).
func NewLocalModel(name string, opts LocalOptions) (*Local, error) {
	lm, ok := localFiles[name]
	if !ok {
		return nil, fmt.Errorf("load local model: %w: %q; the local models are %s", ErrUnknownModel, name, strings.Join(LocalModels(), ", "))
	}
	weights := weightsOf(*lm.weights)
	warn := func(err error) {
		if opts.Logger != nil {
			opts.Logger.Warn("encoder arithmetic measured for this process only", "model", name, "err", err)
		}
	}
	m, err := loadBERT(weights, opts.Precision, lm.exactFFNOut, opts.measured, opts.ChoiceFile, warn)
	if err != nil {
		return nil, fmt.Errorf("load local model %s: %w", name, err)
	}
	// The layers are packed in memory of their own; the file's pages are
	// read again only for a word's embeddings the first time a text holds it.
	release(weights)
	tok := opts.tokenizer
	if tok == nil {
		if tok, err = NewTokenizer([]byte(vocabText)); err != nil {
			return nil, fmt.Errorf("load local model %s: %w", name, err)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	l := &Local{model: m, tok: tok, workers: workers, busy: new(atomic.Int64)}
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
// work stays balanced; while fewer texts than workers are being encoded
// (by this call, others and the models l shares its cores with), each
// text's dense layers and attention heads are split across a crew of the
// spare cores, so a lone query uses every core. Short texts asked for in
// the foreground (questions) are packed with those of concurrent calls
// into shared encodes (encodePacked), their vectors the same as alone. It
// stops early when ctx is done.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ErrEmptyInput
	}
	ids := make([][]int32, len(texts))
	for i, t := range texts {
		ids[i] = l.tok.Encode(t, l.model.cfg.MaxSeqLength)
	}
	out, _, err := l.encode(ctx, ids, nil)
	if err != nil {
		return nil, fmt.Errorf("embed %d texts: %w", len(texts), err)
	}
	return out, nil
}

// EmbedParts embeds each text, given as parts to be joined by spaces, in
// one encoder pass: it returns the text's vector as Embed does and, for
// each part, the normalised mean of its tokens' output vectors, which
// the whole text's context shaped ("late chunking"). A part the model's
// window cuts off has a nil vector.
func (l *Local) EmbedParts(ctx context.Context, texts [][]string) ([][]float32, [][][]float32, error) {
	if len(texts) == 0 {
		return nil, nil, ErrEmptyInput
	}
	ids := make([][]int32, len(texts))
	spans := make([][][2]int, len(texts))
	for i, parts := range texts {
		ids[i], spans[i] = l.tok.EncodeParts(parts, l.model.cfg.MaxSeqLength)
	}
	out, parts, err := l.encode(ctx, ids, spans)
	if err != nil {
		return nil, nil, fmt.Errorf("embed %d texts in parts: %w", len(texts), err)
	}
	for i, sp := range spans {
		for j, s := range sp {
			if s[1] == s[0] {
				parts[i][j] = nil
			}
		}
	}
	return out, parts, nil
}

// encode runs the model over each sequence of ids, pooling the spans of
// it given (spans may be nil), on up to l.workers goroutines; the short
// texts of a foreground call without spans are encoded packed with other
// callers' (encodePacked).
func (l *Local) encode(ctx context.Context, ids [][]int32, spans [][][2]int) ([][]float32, [][][]float32, error) {
	dim := l.model.cfg.Hidden
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) > len(ids[order[b]]) })
	vector := func(flat []float32, i int) []float32 { return flat[i*dim : (i+1)*dim : (i+1)*dim] }
	flat := make([]float32, len(ids)*dim)
	out := make([][]float32, len(ids))
	for i := range out {
		out[i] = vector(flat, i)
	}
	newLane := laneOf(ctx)
	if spans == nil && newLane == nil && len(ids[order[0]]) <= packTokens {
		if err := l.encodePacked(ctx, ids, out); err != nil {
			return nil, nil, err
		}
		return out, nil, nil
	}
	var parts [][][]float32
	if spans != nil {
		n := 0
		for _, sp := range spans {
			n += len(sp)
		}
		flat, next := make([]float32, n*dim), 0
		parts = make([][][]float32, len(ids))
		for i, sp := range spans {
			parts[i] = make([][]float32, len(sp))
			for j := range sp {
				parts[i][j] = vector(flat, next)
				next++
			}
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	running := min(l.workers, len(ids))
	busy := l.busy.Add(int64(running))
	defer l.busy.Add(-int64(running))
	split := max(1, l.workers/int(busy))
	if newLane != nil {
		split = 1 // a background text waits for others; its parts would too
	}
	for w := 0; w < running; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pause func()
			if newLane != nil {
				lane := newLane()
				defer lane.Done()
				pause = func() { lane.Wait(ctx) }
			}
			s, release := l.scratchFor(split, pause)
			defer release()
			seq := make([]sequence, 1)
			for {
				n := int(next.Add(1)) - 1
				if n >= len(order) || ctx.Err() != nil {
					return
				}
				i := order[n]
				seq[0] = sequence{ids: ids[i], out: out[i]}
				if spans != nil {
					seq[0].spans, seq[0].parts = spans[i], parts[i]
				}
				l.model.encode(seq, s)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return out, parts, nil
}

// scratchFor returns scratch from l's pool whose products are split
// split ways (a crew of split-1 helpers) and whose checkpoints call
// pause (nil for foreground work), and the func that gives it back.
func (l *Local) scratchFor(split int, pause func()) (*scratch, func()) {
	s := l.pool.Get().(*scratch)
	if cap(s.helpers) < split-1 {
		s.helpers = make([]helper, split-1)
	}
	s.helpers = s.helpers[:split-1]
	if split > 1 {
		s.crew = newCrew(split)
	}
	s.pause = pause
	return s, func() {
		if s.crew != nil {
			s.crew.close()
			s.crew = nil
		}
		s.pause = nil
		l.pool.Put(s)
	}
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
