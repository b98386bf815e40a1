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
// writing what is between (inner braces kept) to w.
func (r *Reader) balanced(open, closer rune, w io.Writer) (int, error) {
	depth, n := 1, 0
	var buf [utf8.UTFMax]byte
	for {
		c, err := r.read()
		if err != nil {
			return n, errors.New("unbalanced braces")
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
