package api

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// atomNS is the Atom namespace.
const atomNS = "http://www.w3.org/2005/Atom"

// xmlNode is an element of a document read whole: its name, attributes,
// child elements and text.
type xmlNode struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*xmlNode
	text     strings.Builder
}

// readXML reads a document into its root element.
func readXML(doc []byte) (*xmlNode, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{name: tok.Name, attrs: tok.Attr}
			if len(stack) == 0 {
				root = n
			} else {
				top := stack[len(stack)-1]
				top.children = append(top.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(tok)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

func (n *xmlNode) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// atom is n's Atom children named local.
func (n *xmlNode) atom(local string) []*xmlNode {
	var out []*xmlNode
	for _, c := range n.children {
		if c.name.Space == atomNS && c.name.Local == local {
			out = append(out, c)
		}
	}
	return out
}

// rfc3339 is RFC 3339's date-time (section 5.6), as RFC 4287 section 3.3
// requires of every date: upper-case T and Z, seconds, an offset.
var rfc3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

// checkAtom reports where doc breaks what RFC 4287 requires of an Atom
// feed document (its MUSTs on feed, entry, text, person, date, link and
// category constructs, and which Atom elements each may hold); nil if
// nowhere. It is written from the RFC's prose, section by section.
func checkAtom(doc []byte) error {
	root, err := readXML(doc)
	if err != nil {
		return fmt.Errorf("not well-formed XML: %w", err)
	}
	if root.name.Space != atomNS || root.name.Local != "feed" {
		return fmt.Errorf("the root is %s %s, not atom:feed", root.name.Space, root.name.Local)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// once checks that n holds exactly one (min 1) or at most one (min 0)
	// Atom child named local.
	once := func(where string, n *xmlNode, local string, min int) {
		if got := len(n.atom(local)); got > 1 || got < min {
			fail("%s holds %d atom:%s, want %d to 1", where, got, local, min)
		}
	}
	text := func(where string, n *xmlNode) { // 3.1
		if t, ok := n.attr("type"); ok && t != "text" && t != "html" && t != "xhtml" {
			fail("%s: text construct of type %q", where, t)
		}
	}
	date := func(where string, n *xmlNode) { // 3.3
		s := n.text.String()
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil || !rfc3339.MatchString(s) {
			fail("%s: %q is not an RFC 3339 date-time", where, s)
		}
	}
	iri := func(where, s string) { // 4.2.6: an absolute IRI
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			fail("%s: %q is not an absolute IRI", where, s)
		}
	}
	person := func(where string, n *xmlNode) { // 3.2
		if len(n.atom("name")) != 1 {
			fail("%s: a person construct with %d atom:name", where, len(n.atom("name")))
		}
		once(where, n, "uri", 0)
		once(where, n, "email", 0)
	}
	links := func(where string, n *xmlNode) { // 4.2.7
		alternates := map[string]bool{}
		for _, l := range n.atom("link") {
			href, ok := l.attr("href")
			if !ok {
				fail("%s: atom:link without href", where)
			}
			if _, err := url.Parse(href); err != nil {
				fail("%s: link href %q: %v", where, href, err)
			}
			if rel, _ := l.attr("rel"); rel == "" || rel == "alternate" {
				typ, _ := l.attr("type")
				lang, _ := l.attr("hreflang")
				if alternates[typ+"\x00"+lang] {
					fail("%s: two alternate links of type %q and hreflang %q", where, typ, lang)
				}
				alternates[typ+"\x00"+lang] = true
			}
		}
	}
	common := func(where string, n *xmlNode, allowed map[string]int) {
		for _, c := range n.children {
			if c.name.Space == atomNS {
				if _, ok := allowed[c.name.Local]; !ok {
					fail("%s holds atom:%s, which it may not", where, c.name.Local)
				}
			}
		}
		for local, min := range allowed {
			if min >= 0 {
				once(where, n, local, min)
			}
		}
		for _, name := range []string{"title", "subtitle", "summary", "rights"} {
			for _, t := range n.atom(name) {
				text(where+" atom:"+name, t)
			}
		}
		for _, name := range []string{"updated", "published"} {
			for _, d := range n.atom(name) {
				date(where+" atom:"+name, d)
			}
		}
		for _, name := range []string{"author", "contributor"} {
			for _, p := range n.atom(name) {
				person(where+" atom:"+name, p)
			}
		}
		for _, id := range n.atom("id") {
			iri(where+" atom:id", strings.TrimSpace(id.text.String()))
		}
		for _, c := range n.atom("category") {
			if term, ok := c.attr("term"); !ok || term == "" {
				fail("%s: atom:category without a term", where)
			}
		}
		links(where, n)
	}
	// 4.1.1: -1 marks elements that may repeat.
	common("atom:feed", root, map[string]int{"author": -1, "category": -1, "contributor": -1, "generator": 0, "icon": 0,
		"id": 1, "link": -1, "logo": 0, "rights": 0, "subtitle": 0, "title": 1, "updated": 1, "entry": -1})
	feedAuthored := len(root.atom("author")) > 0
	for i, e := range root.atom("entry") { // 4.1.2
		where := fmt.Sprintf("entry %d", i)
		common(where, e, map[string]int{"author": -1, "category": -1, "content": 0, "contributor": -1, "id": 1, "link": -1,
			"published": 0, "rights": 0, "source": 0, "summary": 0, "title": 1, "updated": 1})
		if !feedAuthored && len(e.atom("author")) == 0 && len(e.atom("source")) == 0 {
			fail("%s has no atom:author, nor has the feed", where)
		}
		content := e.atom("content")
		if len(content) == 0 {
			alternate := false
			for _, l := range e.atom("link") {
				rel, _ := l.attr("rel")
				alternate = alternate || rel == "" || rel == "alternate"
			}
			if !alternate {
				fail("%s has neither atom:content nor an alternate link", where)
			}
			continue
		}
		typ, _ := content[0].attr("type")
		_, src := content[0].attr("src")
		textual := typ == "" || typ == "text" || typ == "html" || typ == "xhtml" || strings.HasPrefix(typ, "text/") ||
			strings.HasSuffix(typ, "/xml") || strings.HasSuffix(typ, "+xml")
		if (src || !textual) && len(e.atom("summary")) == 0 { // 4.1.1.1
			fail("%s: content of type %q (src %v) needs an atom:summary", where, typ, src)
		}
	}
	return errors.Join(errs...)
}

// TestCheckAtom: the checker passes a minimal valid feed and finds each
// kind of break it looks for, so a feed it passes has none of them.
func TestCheckAtom(t *testing.T) {
	head := `<feed xmlns="http://www.w3.org/2005/Atom"><id>urn:uuid:1</id><title>t</title><updated>2026-12-02T10:00:00Z</updated>`
	entry := `<id>urn:uuid:2</id><title>e</title><updated>2026-12-02T10:00:00Z</updated><link href="https://example.org/p"/>`
	if err := checkAtom([]byte(head + `<author><name>a</name></author><entry>` + entry + `</entry></feed>`)); err != nil {
		t.Fatalf("a valid feed: %v", err)
	}
	for name, tt := range map[string]struct{ doc, want string }{
		"not Atom":               {`<rss><channel/></rss>`, "not atom:feed"},
		"no feed id":             {`<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><updated>2026-12-02T10:00:00Z</updated></feed>`, "atom:id"},
		"entry without author":   {head + `<entry>` + entry + `</entry></feed>`, "no atom:author"},
		"entry without updated":  {head + `<author><name>a</name></author><entry><id>urn:uuid:2</id><title>e</title><link href="x"/></entry></feed>`, "atom:updated"},
		"lower-case t":           {head + `<author><name>a</name></author><entry>` + strings.Replace(entry, "T10", "t10", 1) + `</entry></feed>`, "RFC 3339"},
		"relative id":            {head + `<author><name>a</name></author><entry>` + strings.Replace(entry, "urn:uuid:2", "2", 1) + `</entry></feed>`, "absolute IRI"},
		"no content, no link":    {head + `<author><name>a</name></author><entry><id>urn:uuid:2</id><title>e</title><updated>2026-12-02T10:00:00Z</updated></entry></feed>`, "neither atom:content"},
		"two alternates":         {head + `<author><name>a</name></author><entry>` + entry + `<link rel="alternate" href="y"/></entry></feed>`, "two alternate links"},
		"nameless author":        {head + `<author></author><entry>` + entry + `</entry></feed>`, "atom:name"},
		"bad text type":          {head + `<author><name>a</name></author><entry>` + entry + `<summary type="markdown">s</summary></entry></feed>`, "text construct"},
		"binary without summary": {head + `<author><name>a</name></author><entry>` + entry + `<content type="application/pdf">AAAA</content></entry></feed>`, "needs an atom:summary"},
		"unknown Atom element":   {head + `<author><name>a</name></author><entry>` + entry + `<colour>red</colour></entry></feed>`, "atom:colour"},
		"two titles":             {head + `<title>again</title></feed>`, "atom:title"},
		"category without term":  {head + `<author><name>a</name></author><entry>` + entry + `<category/></entry></feed>`, "term"},
		"not well-formed":        {head + `<entry>`, "well-formed"},
	} {
		if err := checkAtom([]byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
	}
}
