package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	eng, store, err := openEngine(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer store.Close()
	count, err := store.Count(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seeded := make(chan struct{})
	go func() {
		defer close(seeded)
		if count == 0 && cfg.Seed {
			if err := seed(ctx, eng, log, new(atomic.Pointer[error])); err != nil && ctx.Err() == nil {
				log.Error("seeding the empty store failed", "error", err)
			}
		}
	}()
	m := store.Model()
	log.Info("papersearch MCP server on stdio", "store", store.Kind(), "at", storeLocation(cfg), "papers", count, "model", m.Name)
	out := &lockedWriter{w: os.Stdout}
	in := &stdioGuard{sc: bufio.NewScanner(os.Stdin), out: out, log: log}
	in.sc.Buffer(make([]byte, 64<<10), int(max(cfg.MaxBody, 64<<10)))
	// The user who started this command owns the store: imports need no
	// key here, as the CLI's import does not.
	srv := api.New(eng, api.Options{Logger: log, MaxBody: cfg.MaxBody, OpenWrites: true, Importer: httpImporter(cfg, log)})
	defer srv.Close() // running imports stop, keeping what they stored
	err = srv.MCP().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	cancel()
	<-seeded
	return err
}

// stdioGuard reads JSON-RPC messages a line at a time and passes on those
// the SDK's decoder accepts; any other line gets JSON-RPC's parse error (or
// invalid request) on out and is dropped, so that one malformed message
// does not end the session, as it does in the SDK's stdio transport. A
// line longer than the scanner's buffer ends the session.
type stdioGuard struct {
	sc      *bufio.Scanner
	out     io.Writer
	log     *slog.Logger
	pending []byte
}

func (g *stdioGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if !g.sc.Scan() {
			if err := g.sc.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		line := bytes.TrimSpace(g.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			code := int64(jsonrpc.CodeInvalidRequest)
			if !json.Valid(line) {
				code = jsonrpc.CodeParseError
			}
			g.log.Warn("MCP: a malformed message was answered with an error and dropped", "error", err)
			data, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: &jsonrpc.Error{Code: code, Message: err.Error()}})
			if encErr != nil {
				return 0, encErr
			}
			if _, err := g.out.Write(append(data, '\n')); err != nil {
				return 0, err
			}
			continue
		}
		g.pending = append(append(g.pending[:0], line...), '\n')
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
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
