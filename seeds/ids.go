package seeds

import (
	"strings"

	"github.com/papersearch/papersearch"
)

// DOI is the source a DOI names: id doi:<DOI, lower case>, page
// https://doi.org/<DOI>. doi may carry a https://doi.org/ or doi: prefix;
// ok is false when it is empty.
func DOI(doi string) (_ papersearch.Source, ok bool) {
	doi = strings.TrimSpace(doi)
	for _, prefix := range []string{"https://doi.org/", "http://doi.org/", "http://dx.doi.org/", "https://dx.doi.org/", "doi:"} {
		doi = strings.TrimPrefix(doi, prefix)
	}
	if doi == "" {
		return papersearch.Source{}, false
	}
	return papersearch.Source{ID: "doi:" + strings.ToLower(doi), URL: "https://doi.org/" + doi}, true
}

// Arxiv is the source an arXiv id (without version) names: id
// arxiv:<id>, page https://arxiv.org/abs/<id>; ok is false when it is empty.
func Arxiv(id string) (_ papersearch.Source, ok bool) {
	if id = strings.TrimSpace(id); id == "" {
		return papersearch.Source{}, false
	}
	return papersearch.Source{ID: "arxiv:" + id, URL: "https://arxiv.org/abs/" + id}, true
}

// StableID is how every source names a paper so that another export of the
// same library, or another source, names it alike: doi:<DOI, lower case>
// when the record has a DOI, else arxiv:<id> when it is an arXiv e-print,
// else fallback (the source's own id, such as bibtex:<key>). url is the
// page that id names (https://doi.org/…, https://arxiv.org/abs/…), "" for
// the fallback.
func StableID(doi, arxiv, fallback string) (id, url string) {
	if s, ok := DOI(doi); ok {
		return s.ID, s.URL
	}
	if s, ok := Arxiv(arxiv); ok {
		return s.ID, s.URL
	}
	return fallback, ""
}

// Identify gives p its StableID, its URL when it has none (the page the id
// names), and records the DOI and arXiv id it carries among its sources,
// the keys by which another source's version of the work is recognised. A
// URL the service cannot store is dropped: it is not worth losing the
// paper for.
func Identify(p papersearch.Paper, doi, arxiv, fallback string) papersearch.Paper {
	var url string
	p.ID, url = StableID(doi, arxiv, fallback)
	if p.URL == "" {
		p.URL = url
	}
	if p.URL != "" && !papersearch.ValidURL(p.URL) {
		p.URL = ""
	}
	return WithSources(p, doi, arxiv)
}

// WithSources adds to p's sources the DOI and arXiv id given (either may
// be ""), dropping one whose page is not a URL the service can store.
func WithSources(p papersearch.Paper, doi, arxiv string) papersearch.Paper {
	if s, ok := DOI(doi); ok {
		p.Sources = append(p.Sources, usable(s))
	}
	if s, ok := Arxiv(arxiv); ok {
		p.Sources = append(p.Sources, usable(s))
	}
	return p
}

// usable drops a source's URL when it cannot be stored.
func usable(s papersearch.Source) papersearch.Source {
	if !papersearch.ValidURL(s.URL) {
		s.URL = ""
	}
	return s
}
