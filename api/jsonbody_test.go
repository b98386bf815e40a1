package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/papersearch/papersearch/api/wire"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		in, want string
		pointer  string // a duplicate key's pointer, when refused
	}{
		{`{"query":"a","limit":3.0}`, `{"query":"a","limit":3}`, ""},
		{`{"limit":1e2,"x":-2.50,"y":0.0,"z":-0.0}`, `{"limit":100,"x":-2.50,"y":0,"z":0}`, ""},
		{`{"limit":1e400}`, `{"limit":1e400}`, ""},
		{`{"limit":9007199254740993.0}`, `{"limit":9007199254740993.0}`, ""},
		// Whole by its digits, not by the float64 it rounds to.
		{`{"limit":100.0000000000000000001,"a":1.5e1,"b":150e-1,"c":1.05e1,"d":0.0e-5,"e":-2.000e+2,"f":12e-1}`,
			`{"limit":100.0000000000000000001,"a":15,"b":15,"c":1.05e1,"d":0,"e":-200,"f":12e-1}`, ""},
		{` [1, 2.0, [3.0, {"a": [true, false, "null"]}], "s\u00e9"] `, `[1,2,[3,{"a":[true,false,"null"]}],"sé"]`, ""},
		{`{}`, `{}`, ""},
		{`{"a":{},"b":[]}`, `{"a":{},"b":[]}`, ""},
		{`{"query":"a","query":"b"}`, "", "/query"},
		{`{"filters":{"year_min":1,"year_min":2}}`, "", "/filters/year_min"},
		{`{"papers":[{"id":"a"},{"id":"b","year":1,"year":2}]}`, "", "/papers/1/year"},
		{`{"a/b~":{"x":1,"x":2}}`, "", "/a~1b~0/x"},
		{`{"a":1}{"a":2}`, `{"a":1}{"a":2}`, ""}, // two values: decoding refuses them
		{`{"a":null,"b":1,"c":null}`, `{"a":null,"b":1,"c":null}`, ""},
		{`{"a":{"x":null},"b":[{"y":null,"z":2}]}`, `{"a":{"x":null},"b":[{"y":null,"z":2}]}`, ""},
		{`null`, `null`, ""},
		{`{"authors":["A",null]}`, "", "/authors/1"},
		{`{"papers":[{"id":"a"},null]}`, "", "/papers/1"},
	}
	for _, tt := range tests {
		got, err := canonicalJSON([]byte(tt.in))
		if tt.pointer != "" {
			var p *wire.Problem
			if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Pointer != tt.pointer || p.Status != 400 {
				t.Errorf("%s: err %v, want a 400 naming %s", tt.in, err, tt.pointer)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	// Nesting: as deep as maxJSONDepth is read, one more is refused at
	// once, however deep the body goes (it used to cost memory quadratic
	// in the depth: 200,000 brackets took 24 GB).
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if got, err := canonicalJSON([]byte(nest(maxJSONDepth))); err != nil || string(got) != nest(maxJSONDepth) {
		t.Errorf("%d deep: %s, %v", maxJSONDepth, got, err)
	}
	for _, n := range []int{maxJSONDepth + 1, 200_000} {
		_, err := canonicalJSON([]byte(nest(n)))
		var p *wire.Problem
		if !errors.As(err, &p) || p.Status != 400 || !strings.Contains(p.Detail, "deep") {
			t.Errorf("%d deep: %v, want a 400 saying it nests too deep", n, err)
		}
	}
	// A syntax error keeps its offset in the body as sent.
	_, err := canonicalJSON([]byte(`{"query": "a",, }`))
	var syn *json.SyntaxError
	if !errors.As(err, &syn) || syn.Offset != 14 {
		t.Errorf("syntax error %v, want one at byte 14", err)
	}
}
