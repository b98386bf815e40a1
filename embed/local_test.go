package embed

import (
	"context"
	"encoding/json"
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

// loadReference reads the vectors scripts/reference_vectors.py produced with
// the model package's own Python inference.
func loadReference(t testing.TB) []referenceCase {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []referenceCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 10 {
		t.Fatalf("reference holds %d cases, want at least 10", len(ref.Cases))
	}
	return ref.Cases
}

var (
	localOnce  sync.Once
	localModel *Local
	localErr   error
)

func testLocal(t testing.TB) *Local {
	t.Helper()
	localOnce.Do(func() { localModel, localErr = NewLocal(0) })
	if localErr != nil {
		t.Fatal(localErr)
	}
	return localModel
}

func TestTokenizerMatchesReference(t *testing.T) {
	l := testLocal(t)
	for _, c := range loadReference(t) {
		got := l.Tokenizer().Encode(c.Text, l.MaxTokens())
		if len(got) != len(c.Tokens) {
			t.Errorf("%.40q: %d tokens, want %d\n got %v\nwant %v", c.Text, len(got), len(c.Tokens), got, c.Tokens)
			continue
		}
		for i := range got {
			if got[i] != c.Tokens[i] {
				t.Errorf("%.40q: token %d = %d, want %d\n got %v\nwant %v", c.Text, i, got[i], c.Tokens[i], got, c.Tokens)
				break
			}
		}
	}
}

func TestLocalMatchesReference(t *testing.T) {
	l := testLocal(t)
	cases := loadReference(t)
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	got, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if len(got[i]) != 384 {
			t.Fatalf("dim = %d, want 384", len(got[i]))
		}
		cos := float64(Dot(got[i], c.Vector))
		if cos < 0.999 {
			t.Errorf("%.50q: cosine to reference %.6f, want >= 0.999", c.Text, cos)
		} else {
			t.Logf("%.50q: cosine %.6f", c.Text, cos)
		}
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
