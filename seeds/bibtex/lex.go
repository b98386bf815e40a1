package bibtex

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// bounded is a strings.Builder that keeps at most MaxValueBytes and
// remembers being given more.
type bounded struct {
	b    strings.Builder
	over error
}

func (w *bounded) Write(p []byte) (int, error) {
	if w.over == nil && w.b.Len()+len(p) > MaxValueBytes {
		w.over = fmt.Errorf("value %w: more than %d bytes", errTooLong, MaxValueBytes)
	}
	if w.over == nil {
		w.b.Write(p)
	}
	return len(p), nil
}

// balanced reads up to the closer that balances an opener already read,
// writing what is between (inner braces kept) to w. A field's value
// (inValue) ends, malformed, at a line that opens an entry (entryAhead);
// the body of an @comment, which may hold whole entries commented out,
// does not.
func (r *Reader) balanced(open, closer rune, w io.Writer, inValue bool) (int, error) {
	depth, n := 1, 0
	var buf [utf8.UTFMax]byte
	for {
		c, err := r.read()
		if err != nil {
			return n, errors.New("unbalanced braces")
		}
		if inValue && c == '\n' && r.entryAhead() {
			return n, fmt.Errorf("unbalanced braces: an entry begins at line %d before the value ends", r.line)
		}
		switch c {
		case open:
			depth++
		case closer:
			if depth--; depth == 0 {
				return n, nil
			}
		}
		k, _ := w.Write(buf[:utf8.EncodeRune(buf[:], c)])
		n += k
	}
}

// quoted reads a "quoted" value after its opening quote, writing it to w;
// quotes inside braces do not end it.
func (r *Reader) quoted(w io.Writer) error {
	depth := 0
	var buf [utf8.UTFMax]byte
	for {
		c, err := r.read()
		if err != nil {
			return errors.New("unterminated quoted value")
		}
		if c == '\n' && r.entryAhead() {
			return fmt.Errorf("unterminated quoted value: an entry begins at line %d before it ends", r.line)
		}
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '"' && depth == 0:
			return nil
		}
		w.Write(buf[:utf8.EncodeRune(buf[:], c)])
	}
}

// ident reads a run of name characters, at most MaxKeyBytes of them (what
// follows a longer run is then read as what follows the name, and so is
// malformed).
func (r *Reader) ident() string {
	var b strings.Builder
	for {
		c, err := r.peek()
		if err != nil || !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("_-:.+/", c)) || b.Len() >= MaxKeyBytes {
			return b.String()
		}
		r.read()
		b.WriteRune(c)
	}
}

// entryAhead reports whether the line ahead opens an entry: @, a type and
// { or ( (white space allowed before each). A value never holds one, so a
// value still open there lacks its closing brace or quote; the entry is
// malformed and reading resumes at that @, which is left unread, rather
// than swallowing the entries after it.
func (r *Reader) entryAhead() bool {
	ahead, _ := r.r.Peek(64) // an entry type is short; what is there near the end of input
	i := 0
	for i < len(ahead) && (ahead[i] == ' ' || ahead[i] == '\t') {
		i++
	}
	if i == len(ahead) || ahead[i] != '@' {
		return false
	}
	i++
	letters := i
	for i < len(ahead) && (ahead[i] >= 'a' && ahead[i] <= 'z' || ahead[i] >= 'A' && ahead[i] <= 'Z') {
		i++
	}
	if i == letters {
		return false
	}
	for i < len(ahead) && (ahead[i] == ' ' || ahead[i] == '\t') {
		i++
	}
	return i < len(ahead) && (ahead[i] == '{' || ahead[i] == '(')
}

func (r *Reader) space() {
	for {
		c, err := r.peek()
		if err != nil || !unicode.IsSpace(c) {
			return
		}
		r.read()
	}
}

func (r *Reader) read() (rune, error) {
	c, _, err := r.r.ReadRune()
	if c == '\n' {
		r.line++
	}
	return c, err
}

func (r *Reader) peek() (rune, error) {
	c, _, err := r.r.ReadRune()
	if err != nil {
		return 0, err
	}
	return c, r.r.UnreadRune()
}
