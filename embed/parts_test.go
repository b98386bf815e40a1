package embed

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestEncodePartsMatchesEncode(t *testing.T) {
	tok := testLocal(t).Tokenizer()
	long := strings.Repeat("representation learning ", 300)
	for _, parts := range [][]string{
		{"Attention Is All You Need.\n", "We propose the Transformer.", "It is fast (8 GPUs, 3.5 days)."},
		{"", "Only one sentence, café, naïve, 東京."},
		{"Head.", long, "cut off entirely."},
	} {
		ids, spans := tok.EncodeParts(parts, 512)
		if want := tok.Encode(strings.Join(parts, " "), 512); !slices.Equal(ids, want) {
			t.Errorf("EncodeParts(%q) ids differ from Encode of the joined text", parts)
		}
		at := 1
		for i, sp := range spans {
			if sp[0] != at || sp[1] < sp[0] {
				t.Errorf("%q: span %d = %v, want to start at %d", parts, i, sp, at)
			}
			at = sp[1]
		}
		if at != len(ids)-1 {
			t.Errorf("%q: spans end at %d, want %d ([SEP])", parts, at, len(ids)-1)
		}
	}
}

// TestEmbedParts: for a local model, with its instruction, and the pair,
// a text embedded in parts gets the vector Embed gives the joined text,
// each part a unit vector, nearer its own sentence embedded alone than the
// other part of the same text is, and a part past the window none. (A
// part's vector carries its text's context: e5's vector of one sentence
// of two unrelated ones can be as near the other sentence alone.)
func TestEmbedParts(t *testing.T) {
	pair, err := OpenLocal("bge-small-en-v1.5+e5-small-v2", LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cats, rockets := "Cats purr when they are content and sleep most of the day.", "The rocket engine burns liquid hydrogen at three thousand kelvin."
	texts := [][]string{
		{"Two topics.\n", cats, rockets},
		{"", rockets},
		{"Long.\n", cats, strings.Repeat("word ", 600), rockets},
	}
	for _, tc := range []struct {
		name string
		e    Embedder
	}{
		{"bge-small-en-v1.5", testLocal(t)},
		{"e5-small-v2, document", Instructed(testLocalModel(t, "e5-small-v2"), Document)},
		{"pair, document", Instructed(pair, Document)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pe, ok := AsPartEmbedder(tc.e)
			if !ok {
				t.Fatal("not a PartEmbedder")
			}
			whole, parts, err := pe.EmbedParts(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			joined := make([]string, len(texts))
			for i, p := range texts {
				joined[i] = strings.Join(p, " ")
			}
			want, err := tc.e.Embed(ctx, joined)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := tc.e.Embed(ctx, []string{cats, rockets})
			if err != nil {
				t.Fatal(err)
			}
			for i := range texts {
				if c := Dot(whole[i], want[i]); c < 0.9999 {
					t.Errorf("text %d: whole vector's cosine with Embed's %.5f, want ≥ 0.9999", i, c)
				}
				if len(parts[i]) != len(texts[i]) {
					t.Fatalf("text %d: %d part vectors for %d parts", i, len(parts[i]), len(texts[i]))
				}
			}
			for _, c := range []struct {
				text, part, other, own int
			}{{0, 1, 2, 0}, {0, 2, 1, 1}} {
				v := parts[c.text][c.part]
				if n := Dot(v, v); n < 0.9999 || n > 1.0001 {
					t.Errorf("text %d part %d: norm² %.5f", c.text, c.part, n)
				}
				if own, other := Dot(v, alone[c.own]), Dot(parts[c.text][c.other], alone[c.own]); !(own > other+0.01) {
					t.Errorf("text %d: part %d's cosine with its sentence alone %.3f, part %d's %.3f", c.text, c.part, own, c.other, other)
				}
			}
			if c := Dot(parts[1][1], alone[1]); c < 0.9 {
				t.Errorf("a text of one sentence: its part's cosine with the sentence alone %.3f, want ≥ 0.9", c)
			}
			if parts[2][3] != nil || parts[1][0] != nil {
				t.Errorf("a part past the window or empty has a vector")
			}
		})
	}
}

// TestEmbedPartsWindows: in three models, a sentence past MiniLM's
// 256-piece window but inside the others' 512 keeps bge's and e5's pooled
// vectors, as the pair gives them, and gets MiniLM's of the sentence alone;
// past every window it has none.
func TestEmbedPartsWindows(t *testing.T) {
	triple, err := OpenLocal("bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2", LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	models := triple.(*Pair).Parts()
	pair := NewPair(models[0], models[1])
	ctx := context.Background()
	late := "The rocket engine burns liquid hydrogen at three thousand kelvin."
	texts := [][]string{{"Long.\n", strings.Repeat("word ", 300), late, strings.Repeat("word ", 300), late}}
	_, parts, err := triple.(*Pair).EmbedParts(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	_, pairParts, err := pair.EmbedParts(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := models[2].Embed(ctx, []string{late})
	if err != nil {
		t.Fatal(err)
	}
	v, w := parts[0][2], pairParts[0][2]
	if v == nil || w == nil {
		t.Fatalf("the sentence inside bge's window has no vector: three models %v, the pair %v", v != nil, w != nil)
	}
	// Parts of n models are scaled by 1/√n: 384 dimensions each.
	for i := range 768 {
		if d := math.Abs(float64(v[i])*math.Sqrt(3) - float64(w[i])*math.Sqrt(2)); d > 1e-5 {
			t.Fatalf("dimension %d: the triple's bge/e5 part %f, the pair's %f", i, v[i]*float32(math.Sqrt(3)), w[i]*float32(math.Sqrt(2)))
		}
	}
	if c := math.Sqrt(3) * float64(Dot(v[768:], alone[0])); c < 0.9999 {
		t.Errorf("MiniLM's part has cosine %.5f with the sentence embedded alone, want 1", c)
	}
	if parts[0][4] != nil || pairParts[0][4] != nil {
		t.Error("a sentence past every window has a vector")
	}
}

func TestAsPartEmbedder(t *testing.T) {
	f := &fixed{name: "fixed", v: []float32{1, 0}}
	for _, e := range []Embedder{f, NewPair(f, testLocal(t)), NewPair(testLocal(t), f)} {
		if _, ok := AsPartEmbedder(e); ok {
			t.Errorf("AsPartEmbedder(%s) = true for a model that cannot pool parts", e.Info().Name)
		}
	}
	_, _, err := NewPair(f, testLocal(t)).EmbedParts(context.Background(), [][]string{{"a"}})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Pair.EmbedParts with a model that cannot: %v, want errors.ErrUnsupported", err)
	}
}
