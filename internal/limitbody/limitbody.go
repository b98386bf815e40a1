// Package limitbody caps the bodies of the HTTP answers papersearch reads
// from its upstreams (the paper sources, the embedding endpoint) after
// decompression: a small gzip answer that inflates to gigabytes is
// refused at the cap instead of filling the process's memory. The paper
// sources' client and the embedding client share it.
package limitbody

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrTooLarge is wrapped by the error of reading an answer past its cap.
var ErrTooLarge = errors.New("upstream answer too large")

// Transport is an http.RoundTripper whose answers' bodies end in an error
// wrapping ErrTooLarge once more than Limit bytes have been read from them;
// the error names Limit, and the caller's names the upstream. It counts
// what the base transport hands over: the decompressed bytes when the base
// (http.Transport) asked for gzip itself and inflates the answer, as it
// does unless told otherwise. An answer whose Content-Length is over Limit
// fails on its first read, having read nothing.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Limit is the most bytes read of one answer's body.
	Limit int64
}

// RoundTrip sends req through Base and caps the answer's body.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	b := &body{rc: resp.Body, left: t.Limit, limit: t.Limit}
	if resp.ContentLength > t.Limit {
		b.err = b.tooLarge()
	}
	resp.Body = b
	return resp, nil
}

// body is an answer's body that fails past its limit.
type body struct {
	rc    io.ReadCloser
	left  int64 // bytes still allowed
	limit int64
	err   error // sticky, once reached
}

func (b *body) tooLarge() error {
	return fmt.Errorf("%w: more than its limit of %s, counted decompressed", ErrTooLarge, size(b.limit))
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	// Ask for one byte past the limit, to tell an answer of exactly Limit
	// bytes from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		b.err = err
		return n, err
	}
	n, b.left = int(b.left), 0
	b.err = b.tooLarge()
	return n, b.err
}

func (b *body) Close() error { return b.rc.Close() }

// size writes a limit as people read it: "32 MiB", or bytes when it is
// no whole number of MiB.
func size(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
