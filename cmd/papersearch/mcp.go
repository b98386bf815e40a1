package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch/api"
)

// mcpCmd serves the Model Context Protocol over stdin and stdout until the
// client closes them or ctx is cancelled: the tools and resources the HTTP
// service answers at /mcp (api.Server.MCP), over the local store (an empty
// one is seeded meanwhile, as serve does). Logs go to stderr; stdout
// carries only the protocol.
func mcpCmd(ctx context.Context, cfg Config, log *slog.Logger) error {
	svc, count, err := openServing(ctx, cfg, log)
	if err != nil {
		return err
	}
	store := svc.store
	defer store.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The tools wait for seeding (api.Options.Settled): an assistant that
	// starts this command per conversation asks at once.
	seeded := make(chan struct{})
	var notReady atomic.Pointer[error]
	go func() {
		defer close(seeded)
		if count == 0 && cfg.Seed {
			if err := seed(ctx, svc.cat, log, &notReady); err != nil && ctx.Err() == nil {
				log.Error("seeding the empty store failed", "error", err)
			}
		}
	}()
	m := store.Model()
	log.Info("papersearch MCP server on stdio", "store", store.Kind(), "at", storeLocation(cfg), "papers", count, "model", m.Name)
	out := &lockedWriter{w: os.Stdout}
	// A message may be as large as an import's file over HTTP.
	in := &stdioGuard{r: bufio.NewReaderSize(os.Stdin, 64<<10), limit: int(max(api.BatchBodyFactor*cfg.MaxBody, 64<<10)), out: out, log: log}
	// The user who started this command owns the store: imports need no
	// key here, as the CLI's import does not.
	srv := api.New(svc.eng, svc.cat, api.Options{Logger: log, MaxBody: cfg.MaxBody, OpenWrites: true, Importer: importConfig(cfg, log).Open,
		Settled: seeded, Ready: func() error {
			if e := notReady.Load(); e != nil {
				return *e
			}
			return nil
		}})
	defer srv.Close() // running imports stop, keeping what they stored
	err = srv.MCP().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	cancel()
	<-seeded
	return err
}

// stdioGuard reads JSON-RPC messages a line at a time and passes on those
// the SDK's decoder accepts. The SDK's stdio transport ends a session at
// the first line it cannot decode; the guard answers such a line instead,
// with JSON-RPC's parse error (not JSON) or invalid request (JSON but no
// message, an id with neither a method nor a result or error, a batch, or
// a line longer than limit bytes, read to its end),
// carrying the line's id when it has one, and goes on.
type stdioGuard struct {
	r       *bufio.Reader
	limit   int
	out     io.Writer
	log     *slog.Logger
	pending []byte
}

func (g *stdioGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, tooLong, err := g.line()
		if err != nil {
			return 0, err
		}
		line = bytes.TrimSpace(line)
		switch {
		case tooLong:
			err = g.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("a message may be at most %d bytes", g.limit))
		case len(line) == 0:
			continue
		default:
			msg, derr := jsonrpc.DecodeMessage(line)
			switch resp, isResp := msg.(*jsonrpc.Response); {
			case derr != nil:
				code := int64(jsonrpc.CodeInvalidRequest)
				if !json.Valid(line) {
					code = jsonrpc.CodeParseError
				}
				err = g.refuse(line, code, derr.Error())
			case isResp && resp.Result == nil && resp.Error == nil:
				// Neither a request (no method) nor a response (no
				// result or error): the SDK would drop it unanswered.
				err = g.refuse(line, jsonrpc.CodeInvalidRequest, "a message needs a method (a request) or a result or an error (a response)")
			default:
				g.pending = append(append(g.pending[:0], line...), '\n')
			}
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// line reads the next line; one longer than limit is read to its end and
// reported too long, without its bytes.
func (g *stdioGuard) line() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := g.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > g.limit {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || tooLong):
			return line, tooLong, nil
		case err != nil:
			return nil, false, err
		}
		return line, tooLong, nil
	}
}

// refuse answers a line the SDK cannot take with a JSON-RPC error, with
// the line's id if it has a string or number one, else a null id.
func (g *stdioGuard) refuse(line []byte, code int64, message string) error {
	g.log.Warn("MCP: a malformed message was answered with an error and dropped", "code", code, "error", message)
	id := json.RawMessage("null")
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 && (probe.ID[0] == '"' || probe.ID[0] == '-' || probe.ID[0] >= '0' && probe.ID[0] <= '9') {
		id = probe.ID
	}
	reply, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		return err
	}
	_, err = g.out.Write(append(reply, '\n'))
	return err
}

// Close closes nothing: stdin is the process's.
func (g *stdioGuard) Close() error { return nil }

// lockedWriter serialises whole writes: the session's messages and the
// guard's errors share stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes nothing: stdout is the process's.
func (l *lockedWriter) Close() error { return nil }
