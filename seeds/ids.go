package seeds

import (
	"strings"

	"github.com/papersearch/papersearch"
)

// StableID is how every source names a paper so that another export of the
// same library, or another source, names it alike: doi:<DOI, lower case>
// when the record has a DOI, else arxiv:<id> when it is an arXiv e-print,
// else fallback (the source's own id, such as bibtex:<key>). url is the
// page that id names (https://doi.org/…, https://arxiv.org/abs/…), "" for
// the fallback. doi may carry a https://doi.org/ or doi: prefix.
func StableID(doi, arxiv, fallback string) (id, url string) {
	doi = strings.TrimSpace(doi)
	for _, prefix := range []string{"https://doi.org/", "http://doi.org/", "http://dx.doi.org/", "doi:"} {
		doi = strings.TrimPrefix(doi, prefix)
	}
	switch {
	case doi != "":
		return "doi:" + strings.ToLower(doi), "https://doi.org/" + doi
	case arxiv != "":
		return "arxiv:" + arxiv, "https://arxiv.org/abs/" + arxiv
	}
	return fallback, ""
}

// Identify gives p its StableID, its URL when it has none (the page the id
// names), and drops a URL the service cannot store: such a URL is not worth
// losing the paper for.
func Identify(p papersearch.Paper, doi, arxiv, fallback string) papersearch.Paper {
	var url string
	p.ID, url = StableID(doi, arxiv, fallback)
	if p.URL == "" {
		p.URL = url
	}
	if p.URL != "" && !papersearch.ValidURL(p.URL) {
		p.URL = ""
	}
	return p
}
