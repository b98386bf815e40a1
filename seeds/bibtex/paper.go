package bibtex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/seeds"
	"github.com/papersearch/papersearch/seeds/latex"
)

// Paper turns an entry into a paper. Its id is stable across exports:
// doi:<DOI> when the entry has one, else arxiv:<id> for an arXiv e-print,
// else bibtex:<citation key>. The venue is the booktitle or journal, else
// what the entry type names the publisher by (a thesis's school, a
// report's institution, a book's publisher, a @misc's howpublished unless
// that is a link); the type comes from the entry type (typeOf).
func Paper(e Entry) (papersearch.Paper, error) {
	f := func(name string) string { return latex.Decode(e.Fields[name]) }
	publisher := f(venueField[strings.ToLower(e.Type)])
	if strings.Contains(publisher, "://") {
		publisher = ""
	}
	p := papersearch.Paper{
		Title:    f("title"),
		Abstract: f("abstract"),
		Authors:  Authors(e.Fields["author"]),
		Venue:    firstOf(f("booktitle"), f("journal"), f("journaltitle"), publisher),
		URL:      verbatimURL(e.Fields["url"]),
	}
	if y := strings.TrimSpace(f("year")); len(y) >= 4 {
		fmt.Sscanf(y[:4], "%d", &p.Year)
	} else if d := strings.TrimSpace(f("date")); len(d) >= 4 {
		fmt.Sscanf(d[:4], "%d", &p.Year)
	}
	p.Date = dateOf(strings.TrimSpace(f("date")), p.Year, f("month"))
	arxiv := ""
	if strings.EqualFold(e.Fields["archiveprefix"], "arxiv") || strings.EqualFold(e.Fields["eprinttype"], "arxiv") {
		if m := arxivID.FindStringSubmatch(strings.TrimSpace(e.Fields["eprint"])); m != nil {
			arxiv = m[1]
		}
	}
	p.Type = typeOf(e.Type, p, arxiv != "")
	p = seeds.Identify(p, e.Fields["doi"], arxiv, "bibtex:"+e.Key)
	return papersearch.Complete(p)
}

// typeOf is the paper type of an entry of that type: what the entry type
// names, except that an @article or @misc in a preprint server (Google
// Scholar's "journal = {arXiv preprint arXiv:…}") or with an arXiv e-print
// and no journal is a preprint, and any other @misc unknown.
func typeOf(entryType string, p papersearch.Paper, eprint bool) string {
	t := entryTypes[strings.ToLower(entryType)]
	if (t == papersearch.TypeJournalArticle || t == "") && (p.Venue != "" && !papersearch.Published(p) || p.Venue == "" && eprint) {
		return papersearch.TypePreprint
	}
	return t
}

// verbatimURL reads a url field as biblatex does, verbatim (a LaTeX
// reading would turn its ~ into a space), forgiving a backslash before one
// of the characters LaTeX would otherwise read (\_, \%, \#, \&, \~) and
// the braces of \url{…}.
func verbatimURL(v string) string {
	v = strings.TrimSpace(v)
	if inner, ok := strings.CutPrefix(v, `\url{`); ok && strings.HasSuffix(inner, "}") {
		v = strings.TrimSuffix(inner, "}")
	}
	return strings.NewReplacer(`\_`, "_", `\%`, "%", `\#`, "#", `\&`, "&", `\~`, "~").Replace(v)
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Authors splits a BibTeX author list ("Last, First and First Last and
// others") into names written first name first, decoded from LaTeX; "and"
// inside braces does not split, and "others" is dropped.
func Authors(field string) []string {
	var names []string
	depth, start := 0, 0
	add := func(raw string) {
		name := strings.TrimSpace(raw)
		if name == "" || strings.EqualFold(name, "others") {
			return
		}
		// "Last, First" and "Last, Jr, First" are written first name first.
		parts := splitTop(name, ',')
		switch len(parts) {
		case 2:
			name = parts[1] + " " + parts[0]
		case 3:
			name = parts[2] + " " + parts[0] + " " + parts[1]
		}
		names = append(names, latex.Decode(name))
	}
	lower := strings.ToLower(field)
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '{':
			depth++
		case '}':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(lower[i:], " and ") {
				add(field[start:i])
				start = i + len(" and ")
				i = start - 1
			}
		}
	}
	add(field[start:])
	return names
}

// splitTop splits s at sep outside braces, trimming each part.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// months are the English months' first three letters, as BibTeX's month
// macros and most month fields begin.
var months = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} // read-only

// dateOf is an entry's date: biblatex's date field where it is a day or a
// month (its first, for a range), else the year and month fields' month
// ("mar", "March" or "3"), else "".
func dateOf(date string, year int, month string) string {
	if first, _, _ := strings.Cut(date, "/"); first != "" {
		if _, _, ok := papersearch.ParseDate(first); ok {
			return first
		}
	}
	month = strings.ToLower(strings.TrimSpace(month))
	if year <= 0 || year > papersearch.MaxYear || month == "" {
		return ""
	}
	m, err := strconv.Atoi(month)
	if err != nil {
		m = 0
		for i, name := range months {
			if strings.HasPrefix(month, name) {
				m = i + 1
			}
		}
	}
	if m < 1 || m > 12 {
		return ""
	}
	return fmt.Sprintf("%04d-%02d", year, m)
}
