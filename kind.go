package papersearch

import (
	"fmt"
	"slices"
	"strings"
)

// The kinds of publication a paper's Type names: what its record says it
// is (a BibTeX entry type, a CSL type, OpenAlex's work and source types),
// so that an export cites a journal paper as a journal paper. "" means
// the record did not say.
const (
	TypeJournalArticle     = "journal-article"     // in a journal
	TypeProceedingsArticle = "proceedings-article" // in a conference's or workshop's proceedings
	TypePreprint           = "preprint"            // posted, not (yet) published
	TypeBook               = "book"
	TypeBookChapter        = "book-chapter"
	TypeThesis             = "thesis"
	TypeReport             = "report" // a technical report
	TypeOther              = "other"  // a kind none of these names
)

// Types lists the values Paper.Type may hold besides "".
func Types() []string {
	return []string{TypeJournalArticle, TypeProceedingsArticle, TypePreprint, TypeBook, TypeBookChapter, TypeThesis, TypeReport, TypeOther}
}

// ErrBadType refuses a Type not among Types.
var ErrBadType = fmt.Errorf("type must be one of %s, or left out when unknown", strings.Join(Types(), ", "))

// ValidType reports whether t may be a paper's Type.
func ValidType(t string) bool { return t == "" || slices.Contains(Types(), t) }
