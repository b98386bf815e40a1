package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
)

// gcPercent is the collector's GOGC unless the environment sets one: a
// collection when the heap has grown 25% past what the last one kept
// alive, not Go's 100%. Over 29,100 papers at 16 clients, 40 took the
// serving peak RSS from 1,072 to 785 MiB at no throughput cost past the
// machine's noise; 30 kept the peak within 1.5 times the live heap until
// the live heap grew to about 407 MiB (1.51 and 1.52 on AMD EPYC Zen 4,
// 2026-12-06), and 25 keeps it at 1.40-1.42 (1.35 with one client) with
// every request's throughput and latency within the noise of 30's
// (docs/performance.md, issue 44); the store's in-memory index is most of
// the live heap and holds few pointers, so a collection costs about 17 ms
// of CPU.
const gcPercent = 25

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := notifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var sig signalCause
	interrupted := errors.As(context.Cause(ctx), &sig) // before stop, which cancels ctx too
	stop()
	switch {
	case err == nil:
	case interrupted && errors.Is(err, context.Canceled):
		// Ctrl-C or SIGTERM: the command has said what it did; the
		// shell's convention for a command a signal ended, 128 plus its
		// number (130 for SIGINT, 143 for SIGTERM).
		fmt.Fprintf(os.Stderr, "papersearch: %v\n", sig)
		os.Exit(128 + int(sig.Signal))
	case usageMistake(err):
		fmt.Fprintf(os.Stderr, "papersearch: %s\nRun 'papersearch help' for usage.\n", flagWords(err))
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "papersearch: %v\n", err)
		if h := settingHint(err); h != "" {
			fmt.Fprintln(os.Stderr, h)
		}
		os.Exit(1)
	}
}

// signalCause is the cause of a context a signal cancelled.
type signalCause struct{ syscall.Signal }

func (s signalCause) Error() string { return "stopped by " + s.Signal.String() }

// notifyContext is signal.NotifyContext whose context's cause, when one of
// signals arrives, is a signalCause naming it. A second signal after the
// first ends the process as it would without this (stop has restored
// the signals' default behaviour by then).
func notifyContext(parent context.Context, signals ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, signals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			if n, ok := s.(syscall.Signal); ok {
				cancel(signalCause{n})
			} else {
				cancel(errors.New(s.String()))
			}
		case <-done:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	})
}

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run executes one command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return nil
	}
	if err := commandHelp(ctx, cmd, args, stdout); err != nil || wantsHelp(args) {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	switch cmd {
	case "serve":
		if len(args) > 0 {
			return usageError{"serve takes no arguments; configure it with PAPERSEARCH_* variables"}
		}
		return serve(ctx, cfg, log)
	case "ingest":
		return ingest(ctx, cfg, log, args, stdout, stderr)
	case "import":
		return importCmd(ctx, cfg, log, args, stdout, stderr)
	case "search":
		return searchCmd(ctx, cfg, log, args, stdout)
	case "similar":
		return similarCmd(ctx, cfg, log, args, stdout)
	case "recommend":
		return recommendCmd(ctx, cfg, log, args, stdout)
	case "watch":
		return watchCmd(ctx, cfg, log, args, stdout)
	case "bench":
		return benchCmd(ctx, cfg, log, args, stdout, stderr)
	case "eval":
		return evalCmd(ctx, cfg, log, args, stdout, stderr)
	case "reindex":
		if len(args) > 0 {
			return usageError{"reindex takes no arguments; it rebuilds the index under the configured embedding model"}
		}
		return reindex(ctx, cfg, log, stdout, stderr)
	case "mcp":
		if len(args) > 0 {
			return usageError{"mcp takes no arguments; configure it with PAPERSEARCH_* variables"}
		}
		return mcpCmd(ctx, cfg, log)
	}
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

// commandHelp prints a command's usage when its arguments ask for it (-h,
// --help), before any configuration is read, so help always works: the
// commands with flags print them as they parse.
func commandHelp(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	if !wantsHelp(args) {
		return nil
	}
	var err error
	switch cmd {
	case "serve", "ingest", "reindex", "mcp":
		err = printHelp(stdout, cmd, nil)
	case "import":
		err = importCmd(ctx, Config{}, nil, []string{"", "-h"}, stdout, io.Discard)
	case "search":
		err = searchCmd(ctx, Config{}, nil, []string{"-h"}, stdout)
	case "similar":
		err = similarCmd(ctx, Config{}, nil, []string{"-h"}, stdout)
	case "recommend":
		err = recommendCmd(ctx, Config{}, nil, []string{"-h"}, stdout)
	case "watch":
		err = watchHelp(ctx, args, stdout)
	case "bench":
		err = benchCmd(ctx, Config{}, nil, []string{"-h"}, stdout, io.Discard)
	case "eval":
		err = evalCmd(ctx, Config{}, nil, []string{"-h"}, stdout, io.Discard)
	default:
		return usageError{fmt.Sprintf("unknown command %q", cmd)}
	}
	if errors.Is(err, errHelped) {
		return nil
	}
	return err
}

// usageMistake reports whether err is a mistake in the command line
// (exit status 2): a usage error, or a flag's value the query refuses
// (--mode bogus, --by sideways), here or at PAPERSEARCH_SERVER (a 400
// naming a field a flag sets; other refusals, a paper the server will not
// store, are not the command line's).
func usageMistake(err error) bool {
	var ue usageError
	var refused *wire.Problem
	if errors.As(err, &refused) {
		return (refused.Status == http.StatusBadRequest || refused.Status == http.StatusUnprocessableEntity) &&
			len(refused.Errors) > 0 && cliFlags[refusedField(refused.Errors[0])] != ""
	}
	return errors.As(err, &ue) || errors.Is(err, search.ErrInvalidQuery)
}

// refusedField is the request field or parameter a problem names.
func refusedField(fp wire.FieldProblem) string {
	if f := strings.TrimPrefix(fp.Pointer, "/"); f != "" {
		return f
	}
	return fp.Param
}

// cliFlags names, by the field or parameter the query refuses, the
// command line's flag that sets it.
var cliFlags = map[string]string{ // read-only
	"limit": "--limit", "mode": "--mode", "aspect": "--aspect", "method": "--method",
	"filters/year_min": "--year-min", "filters/year_max": "--year-max", "filters/venues": "--venue", "filters/author": "--author",
	"filters/tags": "--tag", "filters/since": "--since", "filters/until": "--until", "filters/by": "--by",
	"year_min": "--year-min", "year_max": "--year-max", "venue": "--venue", "author": "--author", "tag": "--tag",
	"since": "--since", "until": "--until", "by": "--by",
}

// flagWords is err's message with the refused field, named here or by
// the server at PAPERSEARCH_SERVER, called by its flag: "--by must be
// published or added", not "filters/by must be …".
func flagWords(err error) string {
	var fe *papersearch.FieldError
	if errors.As(err, &fe) && fe.Reason != "" {
		if f, ok := cliFlags[strings.TrimPrefix(fe.Field, "/")]; ok {
			return f + " " + fe.Reason
		}
	}
	var p *wire.Problem
	if errors.As(err, &p) && len(p.Errors) > 0 {
		field := refusedField(p.Errors[0])
		if f, ok := cliFlags[field]; ok {
			return f + " " + strings.TrimSpace(strings.TrimPrefix(p.Errors[0].Detail, field))
		}
	}
	return err.Error()
}
