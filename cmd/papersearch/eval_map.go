package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/atlas"
	"github.com/papersearch/papersearch/atlas/corpusmap"
)

// mapSample is how many papers the neighbourhood measures are estimated
// over (each against all).
const mapSample = 2000

// fieldOf is the field of a venue of the shared ML papers, for measuring
// how well a map's clusters agree with it.
func fieldOf(venue string) string {
	switch venue {
	case "ACL", "NAACL", "COLING", "COLM":
		return "language"
	case "COLT", "ALT":
		return "learning theory"
	case "CoRL":
		return "robotics"
	}
	return "machine learning"
}

// mapReport is what eval --map measures of one layout.
type mapReport struct {
	Layout          string                `json:"layout"`
	Papers          int                   `json:"papers"`
	Seconds         float64               `json:"seconds"`
	PeakHeapMiB     float64               `json:"peak_heap_mib"`
	Trustworthiness atlas.Estimate        `json:"trustworthiness_at_10"`
	Continuity      atlas.Estimate        `json:"continuity_at_10"`
	Levels          []mapLevelReport      `json:"levels"`
	Examples        [][]corpusmap.Cluster `json:"examples"`
}

type mapLevelReport struct {
	Clusters int     `json:"clusters"`
	AMIVenue float64 `json:"ami_venue"`
	AMIField float64 `json:"ami_field"`
	// How well the topics' names tell them apart (atlas.NameOverlap).
	NameOverlapMean float64 `json:"name_overlap_mean"`
	NameOverlapMax  float64 `json:"name_overlap_max"`
	ScholarlyTerms  float64 `json:"scholarly_terms"`
}

// evalMap lays out the corpus as the service does (and, to measure it
// against, by principal components alone) and reports the time and heap
// it took, how well it keeps neighbourhoods (trustworthiness and
// continuity at 10, over a fixed sample, with standard errors), how well
// each level's clusters agree with venue and field (AMI), and the
// coarsest level's topics.
func evalMap(ctx context.Context, ix evalIndex, a evalArgs, papers []papersearch.Paper, stdout, stderr io.Writer) error {
	venue := map[string]string{}
	for _, p := range papers {
		venue[p.ID] = p.Venue
	}
	var reports []mapReport
	for _, opts := range []corpusmap.Options{{}, {PCAOnly: true}} {
		name := "umap"
		if opts.PCAOnly {
			name = "pca"
		}
		runtime.GC()
		var peak uint64
		var ms runtime.MemStats
		last := time.Now()
		m, err := corpusmap.Build(ctx, ix.eng, opts, func(step corpusmap.Step, done, total int) {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			if time.Since(last) > 5*time.Second {
				last = time.Now()
				fmt.Fprintf(stderr, "eval: map (%s): %s %d/%d\n", name, step, done, total)
			}
		})
		if err != nil {
			return err
		}
		vecs, err := corpusmap.Vectors(ctx, ix.eng, m)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(7, 7))
		sample := rng.Perm(len(m.IDs))[:min(mapSample, len(m.IDs))]
		q, err := atlas.Preserved(ctx, vecs, m.Points, 10, sample)
		if err != nil {
			return err
		}
		r := mapReport{Layout: name, Papers: len(m.IDs), Seconds: m.Took.Seconds(), PeakHeapMiB: float64(peak) / (1 << 20),
			Trustworthiness: q.Trustworthiness, Continuity: q.Continuity}
		venues, fields := make([]string, len(m.IDs)), make([]string, len(m.IDs))
		for i, id := range m.IDs {
			venues[i], fields[i] = venue[id], fieldOf(venue[id])
		}
		for l, of := range m.Of {
			topics := make([]atlas.Topic, len(m.Clusters[l]))
			for i, c := range m.Clusters[l] {
				topics[i] = atlas.Topic{Terms: c.Terms}
			}
			lr := mapLevelReport{Clusters: len(m.Clusters[l]), AMIVenue: atlas.AMI(of, venues), AMIField: atlas.AMI(of, fields)}
			lr.NameOverlapMean, lr.NameOverlapMax, lr.ScholarlyTerms = atlas.NameOverlap(topics)
			r.Levels = append(r.Levels, lr)
		}
		r.Examples = m.Clusters[:1]
		reports = append(reports, r)
	}
	if a.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"corpus": a.corpus, "model": ix.model, "store": ix.store, "reports": reports})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "LAYOUT\tPAPERS\tSECONDS\tPEAK HEAP MiB\tTRUSTWORTHINESS@10\tCONTINUITY@10\tCLUSTERS: AMI VENUE / FIELD; NAMES' OVERLAP MEAN / MAX, SCHOLARLY TERMS\n")
	for _, r := range reports {
		var levels []string
		for _, l := range r.Levels {
			levels = append(levels, fmt.Sprintf("%d: %.3f / %.3f; %.3f / %.3f, %.0f%%", l.Clusters, l.AMIVenue, l.AMIField,
				l.NameOverlapMean, l.NameOverlapMax, 100*l.ScholarlyTerms))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.4f ± %.4f\t%.4f ± %.4f\t%s\n", r.Layout, r.Papers, r.Seconds, r.PeakHeapMiB,
			r.Trustworthiness.Mean, r.Trustworthiness.SE, r.Continuity.Mean, r.Continuity.SE, strings.Join(levels, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nTopics of the coarsest level (terms; most central paper):")
	titles := map[string]string{}
	for _, p := range papers {
		titles[p.ID] = p.Title
	}
	for _, c := range reports[0].Examples[0] {
		central := ""
		if len(c.Central) > 0 {
			central = titles[c.Central[0]]
		}
		fmt.Fprintf(stdout, "- %d papers: %s; %q\n", c.Size, strings.Join(c.Terms, ", "), central)
	}
	return nil
}
