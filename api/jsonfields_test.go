package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/papersearch/papersearch/api/wire"
)

// TestUnknownMember: a member no field takes by its exact name is refused
// and named by its place in the body, however deep: inside filters, in an
// array's element, in a map's value; a name in another case is unknown
// (encoding/json would take it), a promoted field's is known, and what
// decodes itself or into any is not looked into.
func TestUnknownMember(t *testing.T) {
	type inner struct {
		Year int `json:"year"`
	}
	type Embedded struct {
		Tag string `json:"tag"`
	}
	type doc struct {
		Embedded
		Query string           `json:"query"`
		Inner *inner           `json:"inner"`
		List  []inner          `json:"list"`
		Extra map[string]inner `json:"extra"`
		Raw   json.RawMessage  `json:"raw"`
		Any   any              `json:"any"`
	}
	for _, tt := range []struct{ body, want string }{
		{`{"query":"x","bogus":1}`, "/bogus"},
		{`{"query":"x","inner":{"year":1,"bogus":2}}`, "/inner/bogus"},
		{`{"list":[{"year":1},{"year":2,"bogus":3}]}`, "/list/1/bogus"},
		{`{"list":[{"year":1},{"YEAR":2}]}`, "/list/1/YEAR"},
		{`{"Query":"x"}`, "/Query"},
		{`{"query":"a","QUERY":"b"}`, "/QUERY"},
		{`{"extra":{"a":{"year":1},"b/c":{"bogus":1}}}`, "/extra/b~1c/bogus"},
		{`{"raw":{"bogus":1},"any":{"bogus":2},"tag":"t","inner":{"bogus":3}}`, "/inner/bogus"},
		{`{"query":"x","inner":{"bogus":[{"bogus":1}]}}`, "/inner/bogus"},
	} {
		var d doc
		err := decodeCanonical([]byte(tt.body), &d, "")
		var p *wire.Problem
		if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Pointer != tt.want {
			t.Errorf("%s: %v, want the unknown field at %s", tt.body, err, tt.want)
		}
	}
	if name, at, ok := unknownMember([]byte(`{"query":"x","tag":"t","extra":{"k":{"year":1}},"raw":{"a":1},"any":[{"b":2}]}`), reflect.TypeFor[*doc]()); ok {
		t.Errorf("a body of known members: %s at %s", name, at)
	}
	// A request's own: an unknown member of its filters.
	var req wire.SearchRequest
	err := decodeStrict([]byte(`{"query":"x","filters":{"year_min":2020,"yr":2020}}`), &req)
	var p *wire.Problem
	if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Pointer != "/filters/yr" || p.Status != 400 {
		t.Errorf("search with filters.yr: %v, want a 400 at /filters/yr", err)
	}
}
