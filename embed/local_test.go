package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
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
			variants := []LocalOptions{{Precision: PrecisionFP32}, {Precision: PrecisionInt8}}
			if len(simdOf(arithBF16)) > 0 {
				variants = append(variants, LocalOptions{Precision: PrecisionBF16})
			} else {
				t.Log("this CPU has no AVX-512 BF16: bfloat16 is not tested")
			}
			if localFiles[name].exactFFNOut {
				// int8 with the feed-forward outputs on each set they may
				// take, whichever a measurement would choose here.
				_, ffnOut, _ := measured()
				for _, k := range ffnOut {
					rates := map[string]float64{rateKey(roleFFNOut, k): 1e6}
					variants = append(variants, LocalOptions{Precision: PrecisionInt8, measured: &measurement{shape: l.model.shape(), rates: rates}})
				}
			}
			for _, opts := range variants {
				p := opts.Precision
				want := got
				var rates map[string]float64 // what the variant's plan was chosen from
				if p != PrecisionFP32 {
					l, err := NewLocalModel(name, opts)
					if err != nil {
						t.Fatal(err)
					}
					if want, err = l.Embed(context.Background(), texts); err != nil {
						t.Fatal(err)
					}
					c := l.Choice()
					rates = c.Measured
					worst = 1
					for i, tc := range cases {
						cos := float64(Dot(want[i], got[i]))
						worst = min(worst, cos)
						if cos < 0.995 {
							t.Errorf("%.50q: %s (%s, ffn-out %s/%s) cosine to float32 %.6f, want >= 0.995", tc.Text, p, c.Kernel, c.FFNOut, c.FFNOutKernel, cos)
						}
					}
					t.Logf("%s: %s (%s, ffn-out %s/%s) lowest cosine to float32 %.6f", name, p, c.Kernel, c.FFNOut, c.FFNOutKernel, worst)
				}
				opts.Workers = 3
				if rates != nil {
					// the same plan: attention is chosen by measurement,
					// and two measurements may differ (a machine's record
					// keeps its processes to one)
					opts.measured = &measurement{shape: l.model.shape(), rates: rates}
				}
				split, err := NewLocalModel(name, opts)
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
				// All of them packed into the rows of one encode, on two
				// goroutines.
				seqs := make([]sequence, len(cases))
				for i, c := range cases {
					seqs[i] = sequence{ids: split.tok.Encode(c.Text, split.MaxTokens()), out: make([]float32, split.Info().Dim)}
				}
				s, release := split.scratchFor(2, nil)
				split.model.encode(seqs, s)
				release()
				for i, c := range cases {
					if fmt.Sprint(seqs[i].out) != fmt.Sprint(want[i]) {
						t.Errorf("%s %.50q: encoded packed with the others differs from the batch", p, c.Text)
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
	hasBF16 := len(simdOf(arithBF16)) > 0
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

// TestChooseArithmetic: auto measures every kernel set of every
// arithmetic the CPU has in each role and keeps what choosePlan keeps; an
// arithmetic asked for runs on its fastest kernels, measured alike.
func TestChooseArithmetic(t *testing.T) {
	l := testLocalModel(t, "all-MiniLM-L6-v2")
	c := l.Choice()
	t.Logf("auto: %+v", c)
	dense, ffnOut, attention := measured()
	if !worthMeasuring() {
		if len(c.Measured) != 0 || c.Precision != PrecisionFP32 {
			t.Fatalf("nothing to choose between, yet %+v", c)
		}
		t.Log("this CPU has one kernel set: nothing is measured")
	} else {
		for role, sets := range map[string][]kernels{roleDense: dense, roleFFNOut: ffnOut, roleAttention: attention} {
			for _, k := range sets {
				if r := c.Measured[rateKey(role, k)]; r <= 0 {
					t.Errorf("%s measured %g", rateKey(role, k), r)
				}
			}
		}
		if want := len(dense) + len(ffnOut) + len(attention); len(c.Measured) != want {
			t.Errorf("%d rates %v, want %d", len(c.Measured), c.Measured, want)
		}
	}
	pl, err := choosePlan(c.Measured, PrecisionAuto, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.Precision != pl.dense.arith.precision() || c.Kernel != pl.dense.name || c.Attention != pl.attention.name {
		t.Errorf("auto chose %+v from its rates, choosePlan %+v", c, pl)
	}
	if pl.dense.arith == arithInt8 && (c.FFNOut != pl.ffnOut.arith.precision() || pl.ffnOut.arith == arithInt8) {
		t.Errorf("MiniLM keeps its feed-forward outputs out of int8: %+v", c)
	}
	for _, p := range []Precision{PrecisionFP32, PrecisionInt8} {
		m, err := NewLocalModel("all-MiniLM-L6-v2", LocalOptions{Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		got := m.Choice()
		want, err := choosePlan(got.Measured, p, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Precision != p || got.Kernel != want.dense.name || got.Attention != want.attention.name {
			t.Errorf("asked %s: %+v, want the kernels of %+v", p, got, want)
		}
	}
}

// TestChoosePlan: of one arithmetic's kernel sets the fastest is kept; a
// less exact arithmetic only when preferMargin faster than the more exact;
// layers kept exact choose among fp32 and bf16 alone; a rate missing
// counts as the slowest.
func TestChoosePlan(t *testing.T) {
	dense, ffnOut, attention := measured()
	if !worthMeasuring() {
		t.Skip("this CPU has one kernel set: there is nothing to choose between")
	}
	// Rates that make each set in turn the fastest by far in every role.
	for _, want := range dense {
		rates := map[string]float64{}
		for _, role := range []string{roleDense, roleFFNOut, roleAttention} {
			for _, k := range dense {
				rates[rateKey(role, k)] = 10
			}
			rates[rateKey(role, want)] = 100
		}
		pl, err := choosePlan(rates, PrecisionAuto, true)
		if err != nil {
			t.Fatal(err)
		}
		if pl.dense.name != want.name || pl.dense.arith != want.arith {
			t.Errorf("fastest %s/%s: dense on %s/%s", want.arith.precision(), want.name, pl.dense.arith.precision(), pl.dense.name)
		}
		if want.arith == arithInt8 {
			if pl.ffnOut.arith == arithInt8 || !slices.ContainsFunc(ffnOut, func(k kernels) bool { return k.name == pl.ffnOut.name }) {
				t.Errorf("fastest %s: feed-forward outputs kept exact on %s/%s", want.name, pl.ffnOut.arith.precision(), pl.ffnOut.name)
			}
		} else if pl.ffnOut.name != pl.dense.name || pl.ffnOut.arith != pl.dense.arith {
			t.Errorf("fastest %s: feed-forward outputs on %s, not as the dense layers", want.name, pl.ffnOut.name)
		}
		if want.arith == arithFP32 && pl.attention.name != want.name {
			t.Errorf("fastest %s: attention on %s", want.name, pl.attention.name)
		}
		if !slices.ContainsFunc(attention, func(k kernels) bool { return k.name == pl.attention.name }) {
			t.Errorf("attention on %s, not a float32 set", pl.attention.name)
		}
	}
	// The margin: a less exact arithmetic 1.2 times faster loses, 1.3 wins.
	fp := candidates(arithFP32)[0]
	for _, k := range dense {
		if k.arith == arithFP32 {
			continue
		}
		for _, f := range []float64{1.2, 1.3} {
			rates := map[string]float64{rateKey(roleDense, fp): 100, rateKey(roleDense, k): 100 * f}
			pl, _ := choosePlan(rates, PrecisionAuto, false)
			if won := pl.dense.name == k.name; won != (f >= preferMargin) {
				t.Errorf("%s at %.1f times fp32: chosen %v", k.name, f, won)
			}
		}
	}
	// No rates at all: the first, most exact set.
	if pl, _ := choosePlan(nil, PrecisionAuto, false); pl.dense.arith != arithFP32 || pl.dense.name != fp.name {
		t.Errorf("without rates: %+v", pl.dense)
	}
	if len(simdOf(arithBF16)) == 0 {
		if _, err := choosePlan(nil, PrecisionBF16, false); !errors.Is(err, ErrNoBF16) {
			t.Errorf("bf16 without a bf16 kernel: %v", err)
		}
	}
}

// TestMeasureAgrees: a measurement's check of each candidate's products
// passes every arithmetic's rounding of the same product and fails one
// whose kernel read the wrong weights or wrote the wrong columns.
func TestMeasureAgrees(t *testing.T) {
	p := newMeasurementProduct(64, 96)
	var outs [][][]float32
	for _, k := range append(candidates(arithFP32)[:1], simdOf(arithInt8)...) {
		run, out := timedLayer(k, []linear{newLinear(p.w, make([]float32, p.out), p.out, p.in, &k)}, []measurementProduct{p})
		run()
		outs = append(outs, out)
	}
	for i, out := range outs {
		if !agrees(out, outs[0]) {
			t.Errorf("candidate %d disagrees with float32", i)
		}
	}
	shifted := [][]float32{append(outs[0][0][1:], 0)} // every column one off
	if agrees(shifted, outs[0]) {
		t.Error("products one column off agree")
	}
	if agrees([][]float32{make([]float32, len(outs[0][0]))}, outs[0]) {
		t.Error("zeros agree")
	}
}
