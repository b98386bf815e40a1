package bibtex

import (
	"strings"
	"unicode"

	"github.com/papersearch/papersearch/seeds/latex"
)

// Name writes an author's name, which papersearch stores first name first
// (the Reader turns "Last, First" around) or as a client sent it, with
// commas as BibTeX's (see splitStored), as BibTeX's "von Last, First" or
// "von Last, Jr, First", so that BibTeX, and any parser that splits names
// as it does, finds the first and last names, and a citation style can
// abbreviate and sort them. A name of one word is a last name. Each word
// is escaped as Value escapes text (its LaTeX decoded first), with a comma
// braced ({,}) so that only the separator splits, and the word "and"
// braced so that it cannot end the name. A name with no words is "".
func Name(name string) string {
	p := splitStored(name)
	switch {
	case p.last == "":
		return ""
	case len(p.first) == 0:
		if strings.EqualFold(p.last, "others") {
			return "{others}" // not BibTeX's "and others"
		}
		return nameWords(strings.Fields(p.last))
	}
	out := nameWords(append(p.von[:len(p.von):len(p.von)], strings.Fields(p.last)...))
	if p.jr != "" {
		out += ", " + nameWords(strings.Fields(p.jr))
	}
	return out + ", " + nameWords(p.first)
}

// nameParts is a name split as BibTeX's "von Last, Jr, First" splits it.
type nameParts struct {
	first, von []string
	last, jr   string
	// turned reports that the name was written with BibTeX's commas
	// (splitStored), so the Reader reads it back first name first.
	turned bool
}

// splitStored splits a stored name. Written with commas as BibTeX writes
// names, it is read as BibTeX reads them: "Erdős, Paul" (von Last,
// First), "King, Jr., Martin Luther" (von Last, Jr, First), and "Martin
// Luther King, Jr." (First Last, Jr: a suffix after the one comma); the
// von part is the lower-case particles before the last name. Otherwise,
// or where a part between commas is empty, its words are split as
// splitName splits them, commas and all.
func splitStored(name string) nameParts {
	s := plain(name)
	parts := strings.Split(s, ",")
	for i, part := range parts {
		parts[i] = strings.Join(strings.Fields(part), " ")
		if len(parts) == 1 || len(parts) > 3 || !strings.ContainsFunc(part, unicode.IsLetter) || strings.ContainsAny(part, "{}") {
			return splitName(strings.Fields(s))
		}
	}
	lastOf := func(part string) (von []string, last string) {
		words := strings.Fields(part)
		k := 0
		for k < len(words)-1 && particles[words[k]] { // lower case: BibTeX's von
			k++
		}
		return words[:k], strings.Join(words[k:], " ")
	}
	switch len(parts) {
	case 2:
		if suffixes[parts[1]] {
			if words := strings.Fields(parts[0]); len(words) >= 2 {
				p := splitName(words)
				p.jr, p.turned = parts[1], true
				return p
			}
			return splitName(strings.Fields(s))
		}
		von, last := lastOf(parts[0])
		return nameParts{von: von, last: last, first: strings.Fields(parts[1]), turned: true}
	case 3:
		von, last := lastOf(parts[0])
		return nameParts{von: von, last: last, jr: parts[1], first: strings.Fields(parts[2]), turned: true}
	}
	return splitName(strings.Fields(s))
}

// splitName splits the words of a name written first name first: the
// last word is the last name, with the particles just before it (van der,
// de la, von: particles, in any case) and a generational suffix after it
// (Jr., Sr., II, III, IV) when the name has three words or more; the rest,
// at least the first word, is the first name.
func splitName(words []string) nameParts {
	n := len(words)
	if n < 2 {
		return nameParts{last: strings.Join(words, "")}
	}
	var p nameParts
	if n >= 3 && suffixes[words[n-1]] {
		p.jr = words[n-1]
		n--
	}
	p.last = words[n-1]
	k := n - 1
	for k > 1 && particles[strings.ToLower(words[k-1])] {
		k--
	}
	p.von, p.first = words[k:n-1], words[:k]
	return p
}

// particles are the words that, just before a last name, belong to it:
// the Dutch, German, French, Italian, Spanish and Portuguese particles.
var particles = map[string]bool{ // read-only
	"van": true, "von": true, "der": true, "den": true, "de": true, "del": true, "della": true, "dei": true, "di": true,
	"da": true, "du": true, "dos": true, "das": true, "la": true, "le": true, "ter": true, "ten": true, "zu": true,
	"zur": true, "y": true,
}

// suffixes are the generational suffixes written after a last name.
var suffixes = map[string]bool{"Jr": true, "Jr.": true, "Sr": true, "Sr.": true, "II": true, "III": true, "IV": true} // read-only

// nameWords writes the words of a name's part, each as nameWord does.
func nameWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = nameWord(w)
	}
	return strings.Join(out, " ")
}

// nameWord writes a word of a name: escaped as text, a comma braced, and
// "and" braced.
func nameWord(w string) string {
	if strings.EqualFold(w, "and") {
		return "{" + w + "}"
	}
	return strings.ReplaceAll(latex.Encode(w), ",", "{,}")
}
