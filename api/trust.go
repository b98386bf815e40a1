package api

import (
	"context"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// Trust is what the server believes about where a request comes from: the
// names it answers to, its own public address, and the proxies whose word
// on the client's address it takes. Everything else a request says of
// itself (its Host, Origin, forwarding headers) is a claim. The zero Trust
// answers to loopback names and addresses only, takes no proxy's word, and
// builds links from the address each connection arrived at.
type Trust struct {
	public  *url.URL       // nil: links name the connection's local address
	hosts   hostPolicy     // Host values answered for beside loopback
	proxies []netip.Prefix // peers whose forwarding header is believed
	// header is the one forwarding header the proxies write (ProxyHeaders):
	// a proxy appends to its own and passes any other a client sent on, so
	// only that one is read.
	header string
}

// ProxyHeaders are the forwarding headers a trusted proxy may be said to
// write: X-Forwarded-For (nginx, Caddy, Traefik, Envoy, most Ingress
// controllers) and RFC 7239's Forwarded.
var ProxyHeaders = []string{"X-Forwarded-For", "Forwarded"} // read-only

// NewTrust checks and returns a Trust. publicURL is the service's base URL
// as its clients reach it ("https://papers.example.org", perhaps with a
// path prefix): feed and alert links are built from it and its host is
// answered for. allowedHosts are further Host values answered for: host
// names, "*.example.org" for any name under a domain, IP addresses, CIDR
// prefixes, or "*" for any host. trustedProxies are the IP addresses or
// CIDR prefixes of reverse proxies whose proxyHeader (one of
// ProxyHeaders, any case; "" is X-Forwarded-For) names the client.
func NewTrust(publicURL string, allowedHosts, trustedProxies []string, proxyHeader string) (Trust, error) {
	t := Trust{header: ProxyHeaders[0]}
	if proxyHeader != "" {
		i := slices.IndexFunc(ProxyHeaders, func(h string) bool { return strings.EqualFold(h, strings.TrimSpace(proxyHeader)) })
		if i < 0 {
			return t, fmt.Errorf("proxy header %q: want X-Forwarded-For or Forwarded", proxyHeader)
		}
		t.header = ProxyHeaders[i]
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" ||
			u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return t, fmt.Errorf("public URL %q: want an absolute http or https URL with a host and no query, e.g. https://papers.example.org", publicURL)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = ""
		t.public = u
	}
	hosts, err := parseHostPolicy(allowedHosts)
	if err != nil {
		return t, err
	}
	t.hosts = hosts
	if t.public != nil {
		t.hosts.names[strings.ToLower(t.public.Hostname())] = true
	}
	for _, s := range trustedProxies {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := parsePrefix(s)
		if err != nil {
			return t, fmt.Errorf("trusted proxy %q: want an IP address or a CIDR prefix such as 10.0.0.0/8", s)
		}
		t.proxies = append(t.proxies, p)
	}
	return t, nil
}

// parsePrefix reads an IP address (a prefix of one address) or a CIDR
// prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// hostPolicy is the set of Host values answered for beside loopback's.
type hostPolicy struct {
	any      bool
	names    map[string]bool
	suffixes []string // ".example.org" of "*.example.org"
	prefixes []netip.Prefix
}

func parseHostPolicy(patterns []string) (hostPolicy, error) {
	h := hostPolicy{names: map[string]bool{}}
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
		case p == "*":
			h.any = true
		case strings.HasPrefix(p, "*."):
			h.suffixes = append(h.suffixes, p[1:])
		case strings.Contains(p, "/"):
			prefix, err := netip.ParsePrefix(p)
			if err != nil {
				return h, fmt.Errorf("allowed host %q: %w", p, err)
			}
			h.prefixes = append(h.prefixes, prefix.Masked())
		default:
			if strings.ContainsAny(p, ":*/ ") && net.ParseIP(strings.Trim(p, "[]")) == nil {
				return h, fmt.Errorf("allowed host %q: want a host name without a port, *.domain, an IP address or a CIDR prefix", p)
			}
			h.names[strings.Trim(p, "[]")] = true
		}
	}
	return h, nil
}

// allows reports whether a request's Host value names this service:
// loopback names (localhost and names under .localhost, which resolve to
// loopback by RFC 6761 and which browsers never ask DNS for) and
// addresses always; others when allowed. A name a DNS rebinding attack
// points at loopback is none of these, so its pages get nothing.
func (h hostPolicy) allows(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if a.IsLoopback() || h.any {
			return true
		}
		for _, p := range h.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return h.names[a.String()]
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || h.any || h.names[host] {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// clientKey is the context key of the request's client as the guard
// judged it.
type clientKey struct{}

// client is a request's client: its address as clientAddr judged it, and
// whether a trusted proxy forwarded it (the address is then the proxy's
// header's claim).
type client struct {
	addr      netip.Addr
	forwarded bool
}

// local reports whether c is on this machine by its own connection: a
// loopback peer that no proxy forwarded. A loopback address a proxy's
// header names is not: the header is text the proxy assembled, and a
// proxy that writes a client's own text into it (Forwarded's host="…"
// from the request's Host) lets the client name any address.
func (c client) local() bool { return c.addr.IsLoopback() && !c.forwarded }

// clientFrom returns the client the guard stored in ctx; ok is false for
// a context that came through no HTTP request (MCP over stdio).
func clientFrom(ctx context.Context) (client, bool) {
	c, ok := ctx.Value(clientKey{}).(client)
	return c, ok
}

// clientAddr is the address of the client a request comes from: its
// peer's, unless the peer is a trusted proxy, in which case the nearest
// address in the forwarding chain of the proxies' header (Trust.header;
// the other is a client's claim, passed on) that is not a trusted proxy.
// A name the chain holds that is no address ("unknown", an obfuscated
// "_id") is the zero Addr, which is no loopback client, and so is a chain
// of none when the header is there (Forwarded: by=… names no client). A
// request with no such header is the proxy's own. Headers from any other
// peer change nothing.
func (t Trust) clientAddr(r *http.Request) netip.Addr {
	peer := remoteAddr(r.RemoteAddr)
	if !t.trusted(peer) {
		return peer
	}
	if len(r.Header.Values(t.header)) == 0 {
		return peer
	}
	chain := forwardedFor(r.Header, t.header)
	if len(chain) == 0 {
		return netip.Addr{}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		a := parseNode(chain[i])
		if !t.trusted(a) {
			return a
		}
		peer = a
	}
	return peer // every hop a trusted proxy: the first is the client
}

// forwarded reports whether r came through a trusted proxy that names
// its client: the peer is one and sent the proxies' header.
func (t Trust) forwarded(r *http.Request) bool {
	return t.trusted(remoteAddr(r.RemoteAddr)) && len(r.Header.Values(t.header)) > 0
}

func (t Trust) trusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range t.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// remoteAddr is the address of a RemoteAddr "ip:port".
func remoteAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(s)
	return a.Unmap()
}

// baseURL is the service's base URL for links a client follows later
// (feeds, alerts): the configured public URL, else the address the
// connection arrived at, never the request's Host.
func (t Trust) baseURL(r *http.Request) string {
	if t.public != nil {
		return t.public.String()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		host := a.String()
		if ap, err := netip.ParseAddrPort(host); err == nil && ap.Addr().IsUnspecified() {
			host = net.JoinHostPort("localhost", fmt.Sprint(ap.Port()))
		}
		return scheme + "://" + host
	}
	return scheme + "://localhost"
}

// crossOrigin is the standard library's check of browsers' cross-origin
// requests, trusting the public URL's origin (behind a proxy that rewrites
// Host, a browser without Sec-Fetch-Site names that origin).
func (t Trust) crossOrigin() *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	if t.public != nil {
		if err := cop.AddTrustedOrigin(t.public.Scheme + "://" + t.public.Host); err != nil {
			panic(err) // NewTrust checked the URL
		}
	}
	return cop
}

// guard refuses, before anything else reads it, a request that is not for
// this service or not from whom it says: a Host not answered for (421, so
// DNS rebinding gets nothing), a browser's cross-origin write (403,
// Sec-Fetch-Site or Origin), and a write whose body is not JSON (415: a
// form or text/plain body is what a page of another site may send with no
// preflight). It stores the client's address in the request's context for
// the key rule.
func (s *Server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !s.trust.hosts.allows(r.Host) {
			return problem(http.StatusMisdirectedRequest, "misdirected-request",
				fmt.Sprintf("this service does not answer for the host %q; it answers for loopback names and addresses and those of PAPERSEARCH_ALLOWED_HOSTS and PAPERSEARCH_PUBLIC_URL", r.Host))
		}
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			// Go's parser drops a malformed pair and keeps the rest: a
			// limit after a semicolon, or a cursor badly escaped, would be
			// ignored, not refused.
			return invalid(fmt.Sprintf("the query string is malformed: %v (separate parameters with &, and percent-encode %%, & and ;)", err))
		}
		if !safeMethod(r.Method) {
			if err := s.crossOrigin.Check(r); err != nil {
				return problem(http.StatusForbidden, "cross-origin",
					"a browser's cross-origin write is refused: this service takes writes from its own pages and from programs, not from pages of other sites")
			}
			if p := bodyTypeProblem(r); p != nil {
				return p
			}
			if p := bodyEncodingProblem(r); p != nil {
				c.Response().Header().Set("Accept-Encoding", "identity")
				return p
			}
		}
		if len(s.trust.proxies) == 0 && (r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != "") &&
			s.warnedProxy.CompareAndSwap(false, true) {
			s.log.Warn("requests carry X-Forwarded-For or Forwarded but PAPERSEARCH_TRUSTED_PROXIES is unset: each client is judged by its peer's address, so behind a proxy every client shares the proxy's rate limit and, with no API key, the proxy's right to write; set PAPERSEARCH_TRUSTED_PROXIES to the proxy's address",
				"peer", r.RemoteAddr)
		}
		who := client{addr: s.trust.clientAddr(r), forwarded: s.trust.forwarded(r)}
		c.SetRequest(r.WithContext(context.WithValue(r.Context(), clientKey{}, who)))
		return next(c)
	}
}

// safeMethod reports whether a method only reads (RFC 9110 §9.2.1).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// bodyTypeProblem refuses a write's body unless it is declared JSON
// (application/json; application/merge-patch+json for PATCH). A write with
// no body and no Content-Type passes.
func bodyTypeProblem(r *http.Request) error {
	ct := r.Header.Get(echo.HeaderContentType)
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == echo.MIMEApplicationJSON || r.Method == http.MethodPatch && mt == mediaMergePatch) {
		return nil
	}
	want := "Content-Type: application/json"
	if r.Method == http.MethodPatch {
		want += " or application/merge-patch+json"
	}
	return problem(http.StatusUnsupportedMediaType, "unsupported-media-type",
		fmt.Sprintf("the request body must be JSON sent as %s (curl: -H 'Content-Type: application/json'); got %q", want, ct))
}

// bodyEncodingProblem refuses a body in a content coding (gzip, br…):
// it is read as sent, so a compressed one would be read as bytes that are
// not JSON, or worse as JSON that is not what was meant. RFC 9110
// §15.5.16: 415, with Accept-Encoding: identity, which the caller sets.
func bodyEncodingProblem(r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for coding := range strings.SplitSeq(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return problem(http.StatusUnsupportedMediaType, "unsupported-media-type",
					fmt.Sprintf("the request body must be sent uncompressed; got Content-Encoding %q", v))
			}
		}
	}
	return nil
}

// mediaMergePatch is JSON Merge Patch's media type (RFC 7396).
const mediaMergePatch = "application/merge-patch+json"
