package papersearch

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestTitleKey(t *testing.T) {
	for _, tt := range []struct {
		title   string
		authors []string
		want    string
	}{
		{"Attention Is All You Need", []string{"Ashish Vaswani", "Noam Shazeer"}, "title:attention is all you need/vaswani"},
		{"Attention is all you need.", []string{"Vaswani, Ashish"}, "title:attention is all you need/vaswani"},
		{"Schrödinger's   Équations, Revisited", []string{"Anna van den Berg"}, "title:schrodinger s equations revisited/berg"},
		{"Schrodinger's Equations: revisited", []string{"Berg, Anna van den"}, "title:schrodinger s equations revisited/berg"},
		{"Deep learning", []string{"LeCun, Yann"}, "title:deep learning/lecun"},
		// Fold's letters: the Scandinavian, Polish and German spellings of
		// a name and a title are those of their ASCII ones, as the search
		// and the author filter take them; a ligature is its letters.
		{"Spectral Methods for Straße Networks", []string{"Søren Jørgensen"}, "title:spectral methods for strasse networks/jorgensen"},
		{"Spectral Methods for Strasse Networks", []string{"Jorgensen, Soren"}, "title:spectral methods for strasse networks/jorgensen"},
		{"Eﬃcient Łukasiewicz Logic", []string{"Łukasz Kaiser"}, "title:efficient lukasiewicz logic/kaiser"},
		{"On Nets", []string{"A. Smith"}, ""},                              // too short
		{"Introduction", []string{"A. Smith"}, ""},                         // too short
		{"On the Theory of Deep Nets", nil, ""},                            // no author
		{"We study the theory of deep networks and…", []string{"X Y"}, ""}, // derived title
		{"On the Theory of Deep Nets", []string{"—"}, ""},                  // no surname
	} {
		if got := TitleKey(Paper{Title: tt.title, Authors: tt.authors}); got != tt.want {
			t.Errorf("TitleKey(%q, %q) = %q, want %q", tt.title, tt.authors, got, tt.want)
		}
	}
}

func TestPublished(t *testing.T) {
	for venue, want := range map[string]bool{
		"": false, "arXiv": false, "CoRR": false, "arXiv preprint arXiv:2401.01234": false,
		"bioRxiv": false, "Submitted to ICLR 2026": false, "OpenReview": false,
		"NeurIPS": true, "Advances in Neural Information Processing Systems 37": true,
		"Phys. Rev. D 76, 013009 (2007)": true, "Nature": true,
	} {
		if got := Published(Paper{Venue: venue}); got != want {
			t.Errorf("Published(venue %q) = %v, want %v", venue, got, want)
		}
	}
}

func TestMerge(t *testing.T) {
	preprint := Paper{ID: "arxiv:2401.01234", Title: "Deep Nets, Preprint Title", Abstract: "Preprint abstract.",
		Authors: []string{"A Smith"}, Venue: "arXiv", Year: 2024, URL: "https://arxiv.org/abs/2401.01234",
		Tags: []string{"arxiv"}, Sources: []Source{{"arxiv:2401.01234", "https://arxiv.org/abs/2401.01234"}}}
	conference := Paper{ID: "openreview:abc", Title: "Deep Nets", Abstract: "Published abstract.",
		Authors: []string{"A Smith", "B Jones"}, Venue: "NeurIPS", Year: 2025, URL: "https://openreview.net/forum?id=abc",
		Tags: []string{"neurips-2025"}, Sources: []Source{{"openreview:abc", "https://openreview.net/forum?id=abc"}}}

	m := Merge(preprint, conference)
	want := Paper{ID: "arxiv:2401.01234", Title: "Deep Nets", Abstract: "Published abstract.",
		Authors: []string{"A Smith", "B Jones"}, Venue: "NeurIPS", Year: 2025, URL: "https://openreview.net/forum?id=abc",
		Tags:    []string{"arxiv", "neurips-2025"},
		Sources: []Source{{"arxiv:2401.01234", "https://arxiv.org/abs/2401.01234"}, {"openreview:abc", "https://openreview.net/forum?id=abc"}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Merge(preprint, conference) =\n%+v\nwant\n%+v", m, want)
	}
	// The published version stays when the preprint arrives again, and
	// merging either version once more changes nothing.
	for _, again := range []Paper{preprint, conference} {
		if got := Merge(m, again); !reflect.DeepEqual(got, m) {
			t.Errorf("Merge(merged, %s) =\n%+v\nwant unchanged\n%+v", again.ID, got, m)
		}
	}
	// Kept the other way round, the work keeps the conference id and the
	// published fields.
	r := Merge(conference, preprint)
	if r.ID != conference.ID || r.Venue != "NeurIPS" || r.Year != 2025 || r.Abstract != conference.Abstract || len(r.Sources) != 2 {
		t.Errorf("Merge(conference, preprint) = %+v, want the conference version under its id with both sources", r)
	}
	// Two published records from two sources: the stored one stays, so
	// importing them in turn does not flip the paper between them.
	journal := conference
	journal.ID, journal.Sources, journal.Venue, journal.Abstract = "doi:10.1/j", nil, "Journal of Nets", "Journal abstract."
	if got := Merge(m, journal); got.Venue != "NeurIPS" || got.Abstract != m.Abstract || len(got.Sources) != 3 {
		t.Errorf("Merge(merged, journal record) = %+v, want the stored fields with the journal's id among the sources", got)
	}
	// A newer record of the same id wins and fills nothing it has.
	later := preprint
	later.Abstract, later.URL, later.Year = "Revised abstract.", "", 0
	if got := Merge(preprint, later); got.Abstract != "Revised abstract." || got.URL != preprint.URL || got.Year != 2024 {
		t.Errorf("Merge(preprint, revision) = %+v, want the revision's abstract with the kept URL and year", got)
	}
}

func TestWorkKeys(t *testing.T) {
	p := Paper{ID: "openreview:abc", Title: "Deep Networks Learn Slowly", Authors: []string{"A Smith"},
		Sources: []Source{{ID: "doi:10.1/x"}, {ID: "openreview:abc"}}}
	want := []string{"doi:10.1/x", "openreview:abc", "title:deep networks learn slowly/smith"}
	if got := WorkKeys(p); !slices.Equal(got, want) {
		t.Errorf("WorkKeys = %q, want %q", got, want)
	}
}

func TestCompleteSources(t *testing.T) {
	p, err := Complete(Paper{Abstract: "Text.", Sources: []Source{
		{ID: "doi:10.1/x", URL: ""}, {ID: "arxiv:1", URL: "https://arxiv.org/abs/1"}, {ID: "doi:10.1/x", URL: "https://doi.org/10.1/x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{{"arxiv:1", "https://arxiv.org/abs/1"}, {"doi:10.1/x", "https://doi.org/10.1/x"}}
	if !slices.Equal(p.Sources, want) {
		t.Errorf("sources = %+v, want %+v", p.Sources, want)
	}
	for _, bad := range [][]Source{
		{{ID: ""}},
		{{ID: "x", URL: "javascript:alert(1)"}},
		{{ID: "x\x00"}},
		make([]Source, MaxSources+1),
	} {
		var fe *FieldError
		if _, err := Complete(Paper{Abstract: "Text.", Sources: bad}); !errors.As(err, &fe) || fe.Field != "sources" || !errors.Is(err, ErrBadSources) {
			t.Errorf("Complete(sources %+v) = %v, want a sources FieldError", bad, err)
		}
	}
}

// TestMergeKeepsTheType: the published version's type wins, a version
// without one takes the other's, and a preprint is never the published
// version whatever its venue says.
func TestMergeKeepsTheType(t *testing.T) {
	pre := Paper{ID: "arxiv:2101.00001", Title: "T", Abstract: "x", Venue: "Journal of Tests", Type: TypePreprint}
	pub := Paper{ID: "doi:10.1/x", Title: "T", Abstract: "x", Venue: "Journal of Tests", Type: TypeJournalArticle}
	if Published(pre) || !Published(pub) {
		t.Errorf("Published: preprint %v, journal article %v", Published(pre), Published(pub))
	}
	if m := Merge(pre, pub); m.Type != TypeJournalArticle || m.ID != pre.ID {
		t.Errorf("Merge(preprint, article) = %+v", m)
	}
	untyped := pub
	untyped.Type = ""
	if m := Merge(untyped, Paper{ID: "x", Title: "T", Abstract: "x", Type: TypeProceedingsArticle}); m.Type != TypeProceedingsArticle {
		t.Errorf("a version without a type took %q", m.Type)
	}
}
