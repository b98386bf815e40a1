package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch/api/wire"
)

// canonicalJSON checks a request body before it is decoded and returns it
// in the form the decoder takes, so that the server reads JSON exactly as
// the OpenAPI document describes it:
//   - an object that names a key twice is refused (400, pointing at the key),
//     as an unknown key is: the last value silently winning hides mistakes;
//   - a null inside an array is refused: arrays hold values (a member whose
//     value is null is kept: decoding leaves its field absent, and an
//     unknown member is refused whatever its value);
//   - a number with a fraction or exponent that is a whole number within
//     ±2^53 ("limit": 3.0, 1e2) is written as an integer, because JSON Schema
//     counts such numbers as integers and so must the service;
//   - a body nesting objects and arrays more than maxJSONDepth deep is
//     refused (400) as soon as it goes deeper: each open container keeps
//     its path, so an unbounded depth would cost memory quadratic in it.
//
// Syntax errors are reported with their offset in the body as sent.
func canonicalJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var (
		out bytes.Buffer
		// One frame per open object or array, with the path to it.
		stack []jsonFrame
	)
	out.Grow(len(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out.WriteByte(byte(d))
			stack = stack[:top]
			afterValue(stack)
			continue
		}
		if top >= 0 && stack[top].object && !stack[top].afterKey {
			key := tok.(string) // the decoder yields only keys here
			if stack[top].keys[key] {
				pointer := stack[top].pointer + "/" + escapePointer(key)
				return nil, invalid(fmt.Sprintf("the key %q appears twice in one object", key),
					wire.FieldProblem{Pointer: pointer, Detail: "appears more than once; send each key once"})
			}
			stack[top].keys[key] = true
			stack[top].afterKey, stack[top].key = true, key
			continue
		}
		if tok == nil && top >= 0 && !stack[top].object {
			return nil, invalid("arrays must not hold null", wire.FieldProblem{Pointer: childPointer(stack), Detail: "must not be null"})
		}
		if top >= 0 && stack[top].count > 0 {
			out.WriteByte(',')
		}
		if top >= 0 && stack[top].object {
			writeJSONString(&out, stack[top].key)
			out.WriteByte(':')
		}
		switch v := tok.(type) {
		case json.Delim: // '{' or '['
			if len(stack) == maxJSONDepth {
				return nil, problem(http.StatusBadRequest, "malformed-json",
					fmt.Sprintf("the request body nests objects and arrays more than %d deep; no request needs more than a few", maxJSONDepth))
			}
			out.WriteByte(byte(v))
			frame := jsonFrame{object: v == '{', pointer: childPointer(stack)}
			if frame.object {
				frame.keys = map[string]bool{}
			}
			stack = append(stack, frame)
			continue
		case json.Number:
			out.WriteString(wholeNumber(v))
		case string:
			writeJSONString(&out, v)
		case bool:
			out.WriteString(strconv.FormatBool(v))
		case nil:
			out.WriteString("null")
		}
		afterValue(stack)
	}
	return out.Bytes(), nil
}

// maxJSONDepth is the deepest nesting of objects and arrays a request
// body may have: the deepest of the OpenAPI document's is five (a batch's
// papers' fields' lists), so 32 refuses no request that means something.
const maxJSONDepth = 32

type jsonFrame struct {
	object   bool
	afterKey bool // an object's key was read; its value comes next
	key      string
	count    int // values written so far (array index of the next one)
	pointer  string
	keys     map[string]bool
}

// afterValue records that the innermost container got one more value.
func afterValue(stack []jsonFrame) {
	if n := len(stack); n > 0 {
		stack[n-1].count++
		stack[n-1].afterKey = false
	}
}

// childPointer is the JSON pointer of the value about to be opened.
func childPointer(stack []jsonFrame) string {
	if len(stack) == 0 {
		return ""
	}
	f := stack[len(stack)-1]
	if f.object {
		return f.pointer + "/" + escapePointer(f.key)
	}
	return f.pointer + "/" + strconv.Itoa(f.count)
}

// escapePointer escapes a key as a JSON pointer (RFC 6901) token.
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

// wholeNumber writes n as an integer literal if it is a whole number that
// float64 holds exactly, and as sent otherwise. Whole is judged on the
// digits as written: 100.0000000000000000001 rounds to 100 as a float64
// but is no integer, and JSON Schema does not count it one.
func wholeNumber(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") || !wholeLiteral(s) {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= maxExactInt {
		return s
	}
	return strconv.FormatInt(int64(f), 10)
}

// wholeLiteral reports whether a JSON number literal's digits after its
// decimal point, once its exponent has moved the point, are all zeros.
func wholeLiteral(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mantissa, exp, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mantissa, ".")
	digits := intPart + frac
	point := len(intPart)
	if exp != "" {
		e, err := strconv.Atoi(exp)
		if err != nil || e > 400 || e < -400 { // past float64's range: as sent
			return strings.Trim(digits, "0") == ""
		}
		point += e
	}
	return strings.Trim(digits[min(max(point, 0), len(digits)):], "0") == ""
}

func writeJSONString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	out.Write(b)
}

// decodeStrict decodes one JSON value with no unknown or repeated fields
// and whole numbers taken as integers; errors are 400 problems naming the
// field.
func decodeStrict(raw []byte, dst any) error {
	canon, err := checkJSON(raw)
	if err != nil {
		return err
	}
	return decodeCanonical(canon, dst, "")
}

// checkJSON is canonicalJSON with its errors as 400 problems.
func checkJSON(raw []byte) ([]byte, error) {
	canon, err := canonicalJSON(raw)
	if err != nil {
		var p *wire.Problem
		if errors.As(err, &p) {
			return nil, p
		}
		return nil, jsonProblem(err, "")
	}
	return canon, nil
}

// decodeCanonical decodes a body canonicalJSON has checked into dst; prefix
// is the JSON pointer of the value within the request body.
func decodeCanonical(canon []byte, dst any, prefix string) error {
	if name, at, found := unknownMember(canon, reflect.TypeOf(dst)); found {
		return unknownFieldProblem(name, prefix+at)
	}
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonProblem(err, prefix)
	}
	if dec.More() {
		return problem(http.StatusBadRequest, "malformed-json", "the request body holds more than one JSON value")
	}
	return nil
}

// BatchBodyFactor is how many times the body limit the batch endpoints
// (POST /v1/papers, POST /v1/embeddings, POST /v1/imports) and PATCH of a
// paper accept: 1,000 real abstracts take about 1.4 MB, and one paper
// within the schema's limits can take megabytes, over the 1 MiB that
// bounds every other body.
const BatchBodyFactor = 16

// readBody reads a JSON request body: at most limit bytes, valid UTF-8, not
// empty. A body declared longer than limit is refused before any of it is
// read; one that stops arriving gets 408; no problem body ever carries
// the underlying error text (addresses, internals): that goes to the log.
func (s *Server) readBody(c echo.Context, limit int64) ([]byte, error) {
	req := c.Request() // its Content-Type was checked by guard
	if req.ContentLength > limit {
		// Not waiting for bytes a client may never send: the connection
		// closes after the answer, its body unread.
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return nil, &http.MaxBytesError{Limit: limit}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, limit))
	if err != nil {
		var (
			maxErr *http.MaxBytesError
			netErr net.Error
		)
		switch {
		case errors.As(err, &maxErr):
			return nil, err
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
			s.log.Info("request body timed out", "path", req.URL.Path, "request_id", requestID(c), "error", err)
			c.Response().Header().Set(echo.HeaderConnection, "close")
			return nil, problem(http.StatusRequestTimeout, "request-timeout",
				"the request body did not arrive in time; send it again, faster")
		}
		s.log.Info("request body unreadable", "path", req.URL.Path, "request_id", requestID(c), "error", err)
		return nil, problem(http.StatusBadRequest, "unreadable-body", "the request body could not be read to its end")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, problem(http.StatusBadRequest, "malformed-json", "the request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return nil, problem(http.StatusBadRequest, "invalid-utf8", "the request body is not valid UTF-8")
	}
	return body, nil
}

// decode reads a JSON request body of at most limit bytes strictly: valid
// UTF-8, one JSON value, no unknown or repeated fields, the right types.
func (s *Server) decode(c echo.Context, limit int64, dst any) error {
	body, err := s.readBody(c, limit)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// extendWriteDeadline gives a response that waits for n texts to be
// embedded time to be written, beyond the server's write timeout (a large
// batch on the local model can take minutes), and returns the request's
// context bounded to end a little before that deadline, so that the work,
// its retries included, gives up in time for its answer (a 503 with
// Retry-After when a dependency did not answer) to reach the client.
func extendWriteDeadline(c echo.Context, n int) (context.Context, context.CancelFunc) {
	budget := time.Minute + time.Duration(n)*2*time.Second
	_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(budget))
	return context.WithTimeout(c.Request().Context(), budget-answerMargin)
}

// answerMargin is the part of a write's deadline kept for its answer.
const answerMargin = 5 * time.Second

// jsonProblem explains a JSON decoding error, naming the field at fault;

// formed is a JSON string type whose values have a form, which a
// type mismatch names (papersearch.Bound, papersearch.DateBy).
type formed interface{ Form() string }

// prefix is the JSON pointer of the decoded value within the request body.
func jsonProblem(err error, prefix string) *wire.Problem {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return problem(http.StatusBadRequest, "malformed-json",
			fmt.Sprintf("the request body is not valid JSON at byte %d: %v", syn.Offset, syn))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem(http.StatusBadRequest, "malformed-json", "the request body ends in the middle of a JSON value")
	case errors.As(err, &typ):
		want := jsonKind(typ.Type.Kind().String())
		if f, ok := reflect.Zero(typ.Type).Interface().(formed); ok {
			want = f.Form() // a string of a form: a date bound, say
		}
		if typ.Field == "" {
			if prefix == "" {
				return invalid("the request body must be "+want,
					wire.FieldProblem{Pointer: "", Detail: fmt.Sprintf("expected %s, got %s", want, typ.Value)})
			}
			return invalid(fmt.Sprintf("%s must be %s, got %s", prefix, want, typ.Value),
				wire.FieldProblem{Pointer: prefix, Detail: fmt.Sprintf("must be %s, got %s", want, typ.Value)})
		}
		pointer := prefix + "/" + strings.ReplaceAll(typ.Field, ".", "/")
		return invalid(fmt.Sprintf("%s must be %s, got %s", strings.TrimPrefix(pointer, "/"), want, typ.Value),
			wire.FieldProblem{Pointer: pointer, Detail: fmt.Sprintf("must be %s, got %s", want, typ.Value)})
	}
	if name, ok := unknownField(err); ok {
		return unknownFieldProblem(name, prefix+"/"+escapePointer(name))
	}
	return problem(http.StatusBadRequest, "malformed-json", "the request body is not valid JSON: "+err.Error())
}

// unknownField returns the member name of encoding/json's error for an
// unknown field (it has no type of its own).
func unknownField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(rest)
	if uerr != nil {
		name = strings.Trim(rest, `"`)
	}
	return name, true
}

// unknownFieldProblem is the 400 for a member named name, at pointer,
// that the request does not have.
func unknownFieldProblem(name, pointer string) *wire.Problem {
	return invalid(fmt.Sprintf("unknown field %q", name),
		wire.FieldProblem{Pointer: pointer, Detail: "is not a field of this request"})
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32", "uint":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return goKind
}
