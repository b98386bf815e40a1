package api

import (
	"net/http"
	"net/netip"
	"strings"
)

// forwardedFor is the forwarding chain header holds, the client first:
// the for= parameter of each element of Forwarded (RFC 7239; "" for an
// element without one), or the X-Forwarded-For list; the header's lines
// in order. A Forwarded header that does not parse (parseForwarded) is a
// chain of one unknown node.
func forwardedFor(h http.Header, header string) []string {
	var chain []string
	if header == "Forwarded" {
		elems, ok := parseForwarded(h.Values("Forwarded"))
		if !ok {
			return []string{""}
		}
		for _, e := range elems {
			chain = append(chain, e["for"])
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

// parseForwarded reads Forwarded header lines (RFC 7239): each element's
// parameters by lower-case name, values unquoted. ok is false when a line
// is not the header's grammar (a parameter's value is a token or a quoted
// string; pairs are separated by ";", elements by ",") or an element
// names a parameter twice: "for=a;host=\"x;for=b\"" is one element for a,
// and "for=a;for=b" none, never b. Empty elements are skipped.
func parseForwarded(lines []string) (elems []map[string]string, ok bool) {
	for _, s := range lines {
		elem := map[string]string{}
		for i := 0; ; {
			i = skipOWS(s, i)
			if i < len(s) && s[i] != ',' && s[i] != ';' {
				j := tokenEnd(s, i)
				if j == i || j == len(s) || s[j] != '=' {
					return nil, false
				}
				name := strings.ToLower(s[i:j])
				v, end, ok := forwardedValue(s, j+1)
				if _, dup := elem[name]; dup || !ok {
					return nil, false
				}
				elem[name] = v
				i = skipOWS(s, end)
			}
			if i == len(s) || s[i] == ',' {
				if len(elem) > 0 {
					elems = append(elems, elem)
				}
				if i == len(s) {
					break
				}
				elem = map[string]string{}
			} else if s[i] != ';' {
				return nil, false
			}
			i++
		}
	}
	return elems, true
}

// forwardedValue reads the token or quoted string (its backslash escapes
// undone) at s[i], and returns it and where it ends.
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
	j := tokenEnd(s, i)
	return s[i:j], j, j > i
}

// tokenEnd is where the token (RFC 9110's tchar) that starts at s[i] ends.
func tokenEnd(s string, i int) int {
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", s[i]) >= 0) {
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
