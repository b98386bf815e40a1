package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

type referenceCase struct {
	Text   string    `json:"text"`
	Tokens []int32   `json:"tokens"`
	Vector []float32 `json:"vector"`
}

// referenceFiles are each local model's parity reference: all-MiniLM-L6-v2's
// from the model package's own Python inference (scripts/reference_vectors.py),
// bge-small-en-v1.5's from ONNX Runtime running the ONNX file the weights were
// converted from (scripts/convert_onnx_model.py --reference).
var referenceFiles = map[string]string{
	"all-MiniLM-L6-v2":  "testdata/reference.json",
	"bge-small-en-v1.5": "testdata/reference-bge-small-en-v1.5.json",
	"e5-small-v2":       "testdata/reference-e5-small-v2.json",
}

// loadReference reads a model's reference token ids and vectors.
func loadReference(t testing.TB, model string) []referenceCase {
	t.Helper()
	b, err := os.ReadFile(referenceFiles[model])
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Model string          `json:"model"`
		Cases []referenceCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.Model != model || len(ref.Cases) < 10 {
		t.Fatalf("reference of %q holds %d cases of %q, want at least 10", model, len(ref.Cases), ref.Model)
	}
	return ref.Cases
}

var (
	localMu     sync.Mutex
	localModels = map[string]*Local{}
)

// testLocal loads the default local model once per test binary.
func testLocal(t testing.TB) *Local { return testLocalModel(t, "bge-small-en-v1.5") }

func testLocalModel(t testing.TB, name string) *Local {
	t.Helper()
	localMu.Lock()
	defer localMu.Unlock()
	if m := localModels[name]; m != nil {
		return m
	}
	m, err := NewLocalModel(name, LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	localModels[name] = m
	return m
}

// TestLocalModelsMatchReference: for every local model, the Go tokenizer's
// ids equal the reference's and the Go encoder's float32 vectors have
// cosine at least 0.999 to the reference's, on short, long (truncated),
// Unicode, CJK, emoji, LaTeX, control-character and blank texts; in int8,
// and in bfloat16 where the CPU runs it, the vectors have cosine at least
// 0.995 to float32's.
func TestLocalModelsMatchReference(t *testing.T) {
	if len(referenceFiles) != len(LocalModels()) {
		t.Fatalf("references for %d models, %d local models", len(referenceFiles), len(LocalModels()))
	}
	for _, name := range LocalModels() {
		t.Run(name, func(t *testing.T) {
			l, err := NewLocalModel(name, LocalOptions{Precision: PrecisionFP32})
			if err != nil {
				t.Fatal(err)
			}
			cases := loadReference(t, name)
			texts := make([]string, len(cases))
			for i, c := range cases {
				texts[i] = c.Text
				got := l.Tokenizer().Encode(c.Text, l.MaxTokens())
				if fmt.Sprint(got) != fmt.Sprint(c.Tokens) {
					t.Errorf("%.40q: tokens\n got %v\nwant %v", c.Text, got, c.Tokens)
				}
			}
			got, err := l.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			worst := 1.0
			for i, c := range cases {
				if len(got[i]) != l.Info().Dim || len(c.Vector) != l.Info().Dim {
					t.Fatalf("dim = %d, reference %d, want %d", len(got[i]), len(c.Vector), l.Info().Dim)
				}
				cos := float64(Dot(got[i], c.Vector))
				worst = min(worst, cos)
				if cos < 0.999 {
					t.Errorf("%.50q: cosine to reference %.6f, want >= 0.999", c.Text, cos)
				}
			}
			t.Logf("%s: %d texts, tokens identical, lowest cosine %.6f", name, len(cases), worst)

			// Every other arithmetic the CPU runs against float32, and a lone
			// text, its layers split across three goroutines, against the
			// batch's vector, bit for bit.
			precisions := []Precision{PrecisionFP32, PrecisionInt8}
			if _, ok := bestBF16Kernel(); ok {
				precisions = append(precisions, PrecisionBF16)
			} else {
				t.Log("this CPU has no AVX-512 BF16: bfloat16 is not tested")
			}
			for _, p := range precisions {
				want := got
				if p != PrecisionFP32 {
					l, err := NewLocalModel(name, LocalOptions{Precision: p})
					if err != nil {
						t.Fatal(err)
					}
					if want, err = l.Embed(context.Background(), texts); err != nil {
						t.Fatal(err)
					}
					worst = 1
					for i, c := range cases {
						cos := float64(Dot(want[i], got[i]))
						worst = min(worst, cos)
						if cos < 0.995 {
							t.Errorf("%.50q: %s cosine to float32 %.6f, want >= 0.995", c.Text, p, cos)
						}
					}
					t.Logf("%s: %s (%s) lowest cosine to float32 %.6f", name, p, l.Choice().Kernel, worst)
				}
				split, err := NewLocalModel(name, LocalOptions{Workers: 3, Precision: p})
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range cases {
					alone, err := split.Embed(context.Background(), []string{c.Text})
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(alone[0]) != fmt.Sprint(want[i]) {
						t.Errorf("%s %.50q: embedded alone on 3 goroutines differs from the batch", p, c.Text)
					}
				}
			}
		})
	}
	if _, err := NewLocalModel("no-such-model", LocalOptions{}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("an unknown model: %v, want ErrUnknownModel", err)
	}
	if _, err := NewLocalModel(LocalModels()[0], LocalOptions{Precision: "fp16"}); err == nil {
		t.Error("an unknown precision was accepted")
	}
	_, hasBF16 := bestBF16Kernel()
	if _, err := NewLocalModel(LocalModels()[0], LocalOptions{Precision: PrecisionBF16}); errors.Is(err, ErrNoBF16) == hasBF16 {
		t.Errorf("bf16 asked of a CPU with bf16 kernel %v: %v", hasBF16, err)
	}
}

func TestLocalEmptyAndCancelled(t *testing.T) {
	l := testLocal(t)
	if _, err := l.Embed(context.Background(), nil); err != ErrEmptyInput {
		t.Errorf("Embed(nil) err = %v, want ErrEmptyInput", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Embed(ctx, []string{"a", "b"}); err == nil {
		t.Error("Embed with a cancelled context succeeded")
	}
}

func TestHalfToFloat(t *testing.T) {
	tests := []struct {
		h    uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x0000, 0}, {0x7bff, 65504}, {0x0001, 5.9604645e-08}, {0x3555, 0.33325195}}
	for _, tt := range tests {
		if got := halfToFloat(tt.h); got != tt.want {
			t.Errorf("halfToFloat(%#x) = %g, want %g", tt.h, got, tt.want)
		}
	}
}

// BenchmarkTokenize is WordPiece tokenisation of one abstract.
func BenchmarkTokenize(b *testing.B) {
	l := testLocal(b)
	text := strings.Repeat("Transformers model long documents with sparse attention patterns, improving efficiency. ", 12)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		l.Tokenizer().Encode(text, l.MaxTokens())
	}
}

// seedAbstracts returns the shipped abstracts, real texts of the length the
// encoder sees most (about 200–300 word pieces).
func seedAbstracts(b testing.TB) []string {
	raw, err := os.ReadFile("../seeds/neurips-2026-abstracts.txt")
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, p := range strings.Split(string(raw), "\n\n") {
		if p = strings.TrimSpace(p); len(p) > 200 {
			out = append(out, p)
		}
	}
	return out
}

// BenchmarkLocalEmbed embeds the seed abstracts in one call per model, on
// every core, and one short query; abstracts/s and ms per query are the
// figures docs/performance.md reports.
func BenchmarkLocalEmbed(b *testing.B) {
	texts := seedAbstracts(b)
	for _, name := range LocalModels() {
		l := testLocalModel(b, name)
		b.Run(name+"/abstracts", func(b *testing.B) {
			for b.Loop() {
				if _, err := l.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "abstracts/s")
		})
		b.Run(name+"/query", func(b *testing.B) {
			q := InstructionsFor(name).Query + "methods that learn from expert value functions"
			for b.Loop() {
				if _, err := l.Embed(context.Background(), []string{q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestChooseArithmetic: auto measures fp32 and every arithmetic the CPU has
// a SIMD kernel for, and keeps the fastest, a less exact one only when it
// is preferMargin faster; an arithmetic asked for is taken as it is.
func TestChooseArithmetic(t *testing.T) {
	l := testLocalModel(t, "all-MiniLM-L6-v2")
	c := l.Choice()
	t.Logf("auto: %+v", c)
	want := []Precision{PrecisionFP32}
	if _, ok := bestBF16Kernel(); ok {
		want = append(want, PrecisionBF16)
	}
	if _, _, _, ok := bestInt8Kernels(); ok {
		want = append(want, PrecisionInt8)
	}
	if len(c.Measured) != len(want) {
		t.Fatalf("measured %v, want every one of %v", c.Measured, want)
	}
	best := PrecisionFP32
	for _, p := range want {
		if c.Measured[p] <= 0 {
			t.Fatalf("%s measured %g", p, c.Measured[p])
		}
		if c.Measured[p] >= preferMargin*c.Measured[best] {
			best = p
		}
	}
	if c.Precision != best {
		t.Errorf("auto chose %s from %v, want %s", c.Precision, c.Measured, best)
	}
	for _, p := range []Precision{PrecisionFP32, PrecisionInt8} {
		m, err := NewLocalModel("all-MiniLM-L6-v2", LocalOptions{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Choice(); got.Precision != p || got.Measured != nil || got.Kernel == "" {
			t.Errorf("asked %s: %+v", p, got)
		}
	}
}
