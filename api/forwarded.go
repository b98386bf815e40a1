package api

import (
	"net/http"
	"net/netip"
	"strings"
)

// forwardedFor is the forwarding chain header holds, the client first:
// the for= parameter of each element of Forwarded (RFC 7239), or the
// X-Forwarded-For list; the header's lines in order. An element of
// Forwarded that does not parse, names for twice, or names none is ""
// (no address): the chain's elements after it, the nearer proxies', still
// count.
func forwardedFor(h http.Header, header string) []string {
	var chain []string
	if header == "Forwarded" {
		for _, line := range h.Values("Forwarded") {
			for _, elem := range forwardedElements(line) {
				params, ok := parseElement(elem)
				if !ok {
					params = nil
				}
				chain = append(chain, params["for"])
			}
		}
		return chain
	}
	for _, line := range h.Values("X-Forwarded-For") {
		for _, node := range strings.Split(line, ",") {
			chain = append(chain, strings.TrimSpace(node))
		}
	}
	return chain
}

// forwardedElements splits a Forwarded line at its commas outside quoted
// strings, leaving out empty elements; a quote left open runs to the
// line's end, one element.
func forwardedElements(line string) []string {
	var out []string
	from, quoted := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			if e := strings.TrimSpace(line[from:i]); e != "" {
				out = append(out, e)
			}
			from = i + 1
		}
	}
	if e := strings.TrimSpace(line[from:]); e != "" {
		out = append(out, e)
	}
	return out
}

// parseElement reads one element of Forwarded (RFC 7239): its parameters
// by lower-case name, values unquoted. ok is false when it is not the
// header's grammar (pairs token=value separated by ";", a value a token
// or a quoted string) or names for twice: "for=a;host=\"x;for=b\"" is
// for a, "for=a;for=b" for no one. A parameter other than for named again
// keeps its first value. An unquoted value may hold ":", "[" and "]", as
// an IPv6 address a proxy writes without the quotes RFC 7239 asks for.
func parseElement(s string) (map[string]string, bool) {
	params := map[string]string{}
	for i := 0; ; i++ {
		i = skipOWS(s, i)
		if i < len(s) && s[i] != ';' {
			j := tokenEnd(s, i, "")
			if j == i || j == len(s) || s[j] != '=' {
				return nil, false
			}
			name := strings.ToLower(s[i:j])
			v, end, ok := forwardedValue(s, j+1)
			if _, dup := params[name]; !ok || dup && name == "for" {
				return nil, false
			}
			if _, dup := params[name]; !dup {
				params[name] = v
			}
			i = skipOWS(s, end)
		}
		if i == len(s) {
			return params, true
		}
		if s[i] != ';' {
			return nil, false
		}
	}
}

// forwardedValue reads the value (a token, or a quoted string with its
// backslash escapes undone) at s[i], and returns it and where it ends.
func forwardedValue(s string, i int) (string, int, bool) {
	if i < len(s) && s[i] == '"' {
		var b strings.Builder
		for i++; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				return b.String(), i + 1, true
			case c == '\\' && i+1 < len(s):
				i++
				b.WriteByte(s[i])
			default:
				b.WriteByte(c)
			}
		}
		return "", i, false // no closing quote
	}
	j := tokenEnd(s, i, ":[]")
	return s[i:j], j, j > i
}

// tokenEnd is where the token (RFC 9110's tchar, and the bytes of also)
// that starts at s[i] ends.
func tokenEnd(s string, i int, also string) int {
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", s[i]) >= 0 || strings.IndexByte(also, s[i]) >= 0) {
		i++
	}
	return i
}

// skipOWS skips spaces and tabs from s[i].
func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// parseNode reads a forwarding node: an IP address, "[v6]", either with a
// port; anything else is the zero Addr.
func parseNode(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}
