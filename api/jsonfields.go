package api

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// unknownMember returns the name and JSON pointer of the first member, in
// the order of body (canonical JSON, one value), that no field of the
// struct it stands in takes by its exact JSON name when body is decoded
// into a value of type t; ok is false where there is none. encoding/json
// would take "Query" for query and "LIMIT" for limit (it matches names
// without regard to case), so that {"query":"a","QUERY":"b"} asked for b
// and a PATCH's "ADDED" went unnoticed; and its own unknown-field error
// names the key but not where it is.
func unknownMember(body []byte, t reflect.Type) (name, pointer string, ok bool) {
	type frame struct {
		t       reflect.Type // what the container decodes into; nil: anything
		object  bool
		wantKey bool         // an object's next token is a key
		key     string       // an object's member being read
		member  reflect.Type // what that member decodes into
		count   int          // values read (an array's next index)
		pointer string
	}
	var stack []frame
	fields := map[reflect.Type]map[string]reflect.Type{} // each struct's, by JSON name
	valueDone := func() {
		if n := len(stack); n > 0 {
			stack[n-1].count++
			stack[n-1].wantKey = stack[n-1].object
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false
		}
		top := len(stack) - 1
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:top]
			valueDone()
			continue
		}
		if top >= 0 && stack[top].wantKey {
			f := &stack[top]
			f.key, f.wantKey, f.member = tok.(string), false, nil
			switch {
			case f.t == nil:
			case f.t.Kind() == reflect.Map:
				f.member = f.t.Elem()
			default: // a struct
				byName, seen := fields[f.t]
				if !seen {
					byName = fieldsOf(f.t)
					fields[f.t] = byName
				}
				field, found := byName[f.key]
				if !found {
					return f.key, f.pointer + "/" + escapePointer(f.key), true
				}
				f.member = field
			}
			continue
		}
		want, here := t, ""
		switch {
		case top >= 0 && stack[top].object:
			want, here = stack[top].member, stack[top].pointer+"/"+escapePointer(stack[top].key)
		case top >= 0:
			want, here = nil, stack[top].pointer+"/"+strconv.Itoa(stack[top].count)
			if stack[top].t != nil {
				want = stack[top].t.Elem()
			}
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			stack = append(stack, frame{t: decodedAs(want, d == '{'), object: d == '{', wantKey: d == '{', pointer: here})
			continue
		}
		valueDone()
	}
}

// decodedAs is what a container of the kind object says decodes into
// where t is expected: nil (anything) for an interface, a type that
// decodes itself, or a mismatch, which decoding reports otherwise.
func decodedAs(t reflect.Type, object bool) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		if selfDecoding(t) {
			return nil
		}
		t = t.Elem()
	}
	if t == nil || selfDecoding(t) || selfDecoding(reflect.PointerTo(t)) {
		return nil
	}
	switch k := t.Kind(); {
	case object && k == reflect.Struct, object && k == reflect.Map:
		return t
	case !object && (k == reflect.Slice || k == reflect.Array):
		return t
	}
	return nil
}

func selfDecoding(t reflect.Type) bool {
	return t.Implements(reflect.TypeFor[json.Unmarshaler]()) || t.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// fieldsOf returns the fields of struct t a JSON object's members decode
// into, by their JSON names; promoted fields of embedded structs included.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous && f.Type.Kind() == reflect.Struct || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := out[name]; !dup || len(f.Index) == 1 { // a field of t's own hides a promoted one
			out[name] = f.Type
		}
	}
	return out
}
