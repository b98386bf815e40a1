package seeds

import "testing"

func TestStableID(t *testing.T) {
	for _, tt := range []struct{ doi, arxiv, fallback, id, url string }{
		{"10.1038/Nature14539", "1234.5678", "x", "doi:10.1038/nature14539", "https://doi.org/10.1038/Nature14539"},
		{"https://doi.org/10.5/X", "", "x", "doi:10.5/x", "https://doi.org/10.5/X"},
		{" doi:10.5/Y ", "", "x", "doi:10.5/y", "https://doi.org/10.5/Y"},
		{"", "2401.01234", "x", "arxiv:2401.01234", "https://arxiv.org/abs/2401.01234"},
		{"", "", "bibtex:key", "bibtex:key", ""},
	} {
		if id, url := StableID(tt.doi, tt.arxiv, tt.fallback); id != tt.id || url != tt.url {
			t.Errorf("StableID(%q, %q, %q) = %q, %q; want %q, %q", tt.doi, tt.arxiv, tt.fallback, id, url, tt.id, tt.url)
		}
	}
}
