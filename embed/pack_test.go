package embed

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestConcurrentQuestionsPacked: questions asked at once, by many callers
// or in one call, are packed into shared encodes, and each gets the vector
// it gets alone, bit for bit; a caller that has given up gets its
// context's error.
func TestConcurrentQuestionsPacked(t *testing.T) {
	ctx := context.Background()
	topics := []string{"graph neural networks", "diffusion models for images", "reinforcement learning from human feedback",
		"sparse attention", "protein structure", "federated optimisation"}
	questions := make([]string, 48)
	for i := range questions {
		questions[i] = fmt.Sprintf("how do %s handle case %d?", topics[i%len(topics)], i)
	}
	for _, name := range []string{"bge-small-en-v1.5", "all-MiniLM-L6-v2"} { // CLS and mean pooled
		l := testLocalModel(t, name)
		alone := make([][]float32, len(questions))
		for i, q := range questions {
			v, err := l.Embed(ctx, []string{q})
			if err != nil {
				t.Fatal(err)
			}
			alone[i] = v[0]
		}
		before := l.pack.shared.Load()
		got := make([][]float32, len(questions))
		var wg sync.WaitGroup
		const callers = 16
		for c := range callers {
			wg.Go(func() {
				for i := c; i < len(questions); i += callers {
					v, err := l.Embed(ctx, []string{questions[i]})
					if err != nil {
						t.Error(err)
						return
					}
					got[i] = v[0]
				}
			})
		}
		wg.Wait()
		together, err := l.Embed(ctx, questions)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range questions {
			if fmt.Sprint(got[i]) != fmt.Sprint(alone[i]) {
				t.Errorf("%s %q: asked beside others, its vector differs from alone", name, q)
			}
			if fmt.Sprint(together[i]) != fmt.Sprint(alone[i]) {
				t.Errorf("%s %q: in one call with the others, its vector differs from alone", name, q)
			}
		}
		if l.pack.shared.Load() == before {
			t.Errorf("%s: no question was packed with another", name)
		}
		gone, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := l.Embed(gone, questions[:3]); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: a cancelled call: %v, want context.Canceled", name, err)
		}
	}
}

// TestRunnableQuestionsJoinThePack: questions whose callers are runnable
// when a pack is about to be taken join it, rather than each waiting for
// a pack of its own: the runner yields once first. On one processor the
// callers run one after another, so without the yield the first question
// would be encoded alone while the others wait.
func TestRunnableQuestionsJoinThePack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	l := testLocalModel(t, "all-MiniLM-L6-v2")
	const n = 8
	before := l.pack.shared.Load()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := l.Embed(ctx, []string{fmt.Sprintf("sparse attention for long documents, case %d", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if shared := l.pack.shared.Load() - before; shared < n/2 {
		t.Errorf("%d of %d questions asked at once were packed with others, want at least %d", shared, n, n/2)
	}
}
