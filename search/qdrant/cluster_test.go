package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/internal/hashvec"
	"github.com/papersearch/papersearch/internal/testenv"
	"github.com/papersearch/papersearch/search/storage"
)

// hashModel stands for an embedding model in the cluster test, where the
// store is what is measured: each paper's vector is a deterministic
// pseudo-random unit vector seeded by its id.
var hashModel = embed.ModelInfo{Name: "hash-test-384", Dim: 384}

func hashVector(id string) []float32 { return hashvec.Of(id, hashModel.Dim) }

func qdrantCtl(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("../../deploy/qdrant-local.sh", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("qdrant-local.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("qdrant-local.sh %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
}

// TestQdrantClusterSurvivesLostNode runs against the 3-node cluster that
// 'deploy/qdrant-local.sh up --nodes 3' starts; PAPERSEARCH_TEST_QDRANT_CLUSTER
// holds its gRPC URLs, comma-separated, node 0 first. It kills node 1.
func TestQdrantClusterSurvivesLostNode(t *testing.T) {
	urls := strings.Split(os.Getenv("PAPERSEARCH_TEST_QDRANT_CLUSTER"), ",")
	if len(urls) != 3 {
		testenv.Missing(t, "PAPERSEARCH_TEST_QDRANT_CLUSTER is not three gRPC URLs: start a cluster with deploy/qdrant-local.sh up --nodes 3")
	}
	ctx := context.Background()
	papers := testenv.MLPapers(t, 0)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	coll := "cluster_test_" + hex.EncodeToString(suffix)
	open := func(url string) *Store {
		q, err := Open(ctx, Config{URL: url, Collection: coll, Shards: 6, Replication: 2}, hashModel)
		if err != nil {
			t.Fatalf("open %s: %v", url, err)
		}
		return q
	}
	q0 := open(urls[0])
	defer q0.Close()
	defer q0.Drop(context.Background())

	// Ingest: every acknowledged batch is recorded.
	acked := make([]string, 0, len(papers))
	start := time.Now()
	const batch = 512
	for i := 0; i < len(papers); i += batch {
		part := papers[i:min(i+batch, len(papers))]
		docs := make([]storage.Document, len(part))
		for j, p := range part {
			fp := storage.FingerprintOf(p)
			docs[j] = storage.Document{Paper: p, Vector: hashVector(p.ID), TextHash: fp.TextHash, PaperHash: fp.PaperHash}
		}
		if err := q0.Upsert(ctx, docs); err != nil {
			t.Fatalf("upsert batch at %d: %v", i, err)
		}
		for _, p := range part {
			acked = append(acked, p.ID)
		}
	}
	took := time.Since(start)
	t.Logf("ingested %d papers into a 3-node cluster (6 shards, replication 2) in %s: %.0f papers/s (store side only)",
		len(acked), took.Round(time.Millisecond), float64(len(acked))/took.Seconds())

	checkAll := func(q *Store, when string) {
		t.Helper()
		missing := 0
		for i := 0; i < len(acked); i += 1000 {
			ids := acked[i:min(i+1000, len(acked))]
			got, err := q.Lookup(ctx, ids)
			if err != nil {
				t.Fatalf("%s: lookup: %v", when, err)
			}
			missing += len(ids) - len(got)
		}
		if missing > 0 {
			t.Errorf("%s: %d acknowledged papers missing", when, missing)
		}
		// Searches: each sampled paper's own vector finds it first.
		for i := 0; i < len(papers); i += len(papers) / 100 {
			id := papers[i].ID
			got, err := q.Nearest(ctx, hashVector(id), 5, papersearch.Filter{})
			if err != nil {
				t.Fatalf("%s: search %d failed: %v", when, i, err)
			}
			if len(got) == 0 || got[0].ID != id {
				t.Errorf("%s: search for %s returned %v", when, id, got)
			}
		}
	}

	qdrantCtl(t, "kill", "1")
	defer func() {
		// Leave the cluster whole for whoever runs next, even on failure.
		if exec.Command("../../deploy/qdrant-local.sh", "status").Run() == nil {
			exec.Command("../../deploy/qdrant-local.sh", "start", "1").Run()
		}
	}()
	for _, url := range []string{urls[0], urls[2]} {
		q := open(url)
		checkAll(q, "node 1 down, via "+url)
		if n, err := q.Count(ctx); err != nil || n != len(acked) {
			t.Errorf("node 1 down, via %s: count %d (%v), want %d", url, n, err, len(acked))
		}
		q.Close()
	}
	if !t.Failed() {
		t.Logf("fault: Qdrant node 1 killed (SIGKILL): via nodes 0 and 2, all %d acknowledged papers found and 2 x 100 searches answered with the right paper first",
			len(acked))
	}

	qdrantCtl(t, "start", "1")
	// The restarted node catches up; its count must become exact.
	deadline := time.Now().Add(2 * time.Minute)
	for i, url := range urls {
		q := open(url)
		for {
			n, err := q.Count(ctx)
			if err == nil && n == len(acked) {
				t.Logf("node %d counts %d", i, n)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: count %d (%v) after restart, want %d", i, n, err, len(acked))
			}
			time.Sleep(500 * time.Millisecond)
		}
		q.Close()
	}
	q1 := open(urls[1])
	checkAll(q1, "after restart, via node 1")
	q1.Close()
}
