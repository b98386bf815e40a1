package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/api/alerts"
	"github.com/papersearch/papersearch/atlas/corpusmap"
	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/catalog/imports"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/sqlite"
	"github.com/papersearch/papersearch/search/storage"
	"github.com/papersearch/papersearch/seeds"
)

// newEmbedder returns the OpenAI-compatible client when PAPERSEARCH_EMBED_URL
// is set and the in-process model otherwise, with the ingest batch that
// keeps it busy.
func newEmbedder(ctx context.Context, cfg Config, log *slog.Logger) (embed.Embedder, int, error) {
	if cfg.EmbedURL == "" {
		start := time.Now()
		model, err := embed.OpenLocal(cfg.Model, cfg.localOptions(log))
		if err != nil {
			return nil, 0, err
		}
		log.Debug("local model loaded", "model", model.Info().Name, "took", time.Since(start).Round(time.Millisecond))
		for name, c := range embed.Choices(model) {
			// Said once per machine, when measured; read back from the
			// machine's record, only at debug level.
			level := slog.LevelInfo
			if c.Recorded {
				level = slog.LevelDebug
			}
			log.Log(ctx, level, "encoder kernels", "model", name, "precision", c.Precision, "kernel", c.Kernel,
				"ffn_out", c.FFNOut, "ffn_out_kernel", c.FFNOutKernel, "attention_kernel", c.Attention, "attention", c.AttentionPrecision,
				"measured_gops", c.Measured, "recorded", c.Recorded)
		}
		return model, catalog.IngestBatch, nil
	}
	remote := func(model string, dims int) (embed.Embedder, error) {
		client, err := embed.NewOpenAI(ctx, embed.OpenAIConfig{
			BaseURL:      cfg.EmbedURL,
			APIKey:       cfg.EmbedAPIKey,
			Model:        model,
			Dimensions:   dims,
			BatchSize:    cfg.EmbedBatch,
			BatchTokens:  cfg.EmbedBatchTokens,
			Concurrency:  cfg.EmbedConcurrency,
			MaxRetryTime: cfg.EmbedRetryMax,
			Logger:       log,
		})
		if err != nil {
			return nil, fmt.Errorf("embedding endpoint %s: %w", cfg.EmbedURL, err)
		}
		return client, nil
	}
	// Enough texts per ingest batch for every request slot to be busy.
	batch := max(cfg.EmbedBatch, 1) * max(cfg.EmbedConcurrency, 1)
	// A pair (a+b) asks the endpoint for each model by name, so each gets
	// its own instructions, as the in-process pair does.
	if names := strings.Split(cfg.EmbedModel, "+"); len(names) > 1 {
		if cfg.EmbedDimensions != 0 {
			return nil, 0, fmt.Errorf("PAPERSEARCH_EMBED_DIMENSIONS applies to one model, not the pair %s", cfg.EmbedModel)
		}
		models := make([]embed.Embedder, len(names))
		for i, name := range names {
			m, err := remote(name, 0)
			if err != nil {
				return nil, 0, err
			}
			models[i] = m
		}
		return embed.NewPair(models...), batch, nil
	}
	client, err := remote(cfg.EmbedModel, cfg.EmbedDimensions)
	if err != nil {
		return nil, 0, err
	}
	return client, batch, nil
}

// service is what a command works on: the engine that reads the store,
// the catalog that writes it, and the store, the caller's to close.
type service struct {
	eng   *search.Engine
	cat   *catalog.Catalog
	store storage.Store
}

// openServing opens the service as openEngine does, for a server of it
// (serve, mcp), counts the papers stored and, on the embedded store,
// follows other processes' changes to its file.
func openServing(ctx context.Context, cfg Config, log *slog.Logger, observe ...func(string, time.Duration, error)) (service, int, error) {
	svc, err := openEngine(ctx, cfg, log, observe...)
	if err != nil {
		return service{}, 0, err
	}
	count, err := svc.store.Count(ctx)
	if err != nil {
		svc.store.Close()
		return service{}, 0, err
	}
	// What another process (the command line's ingest, a second server)
	// writes to the embedded store's file is searchable here within a
	// second; Qdrant serves every instance the same collection already.
	if s, ok := svc.store.(*sqlite.Store); ok {
		go s.Follow(ctx, sqlite.DefaultFollowEvery, log)
	}
	return svc, count, nil
}

// openEngine connects the embedder and opens the store under its model.
// observe, if not nil, receives the engine's operation timings.
func openEngine(ctx context.Context, cfg Config, log *slog.Logger, observe ...func(string, time.Duration, error)) (service, error) {
	embedder, batch, err := newEmbedder(ctx, cfg, log)
	if err != nil {
		return service{}, err
	}
	return engineWith(ctx, cfg, log, embedder, batch, observe...)
}

// engineWith opens the store under embedder's model, the engine on it and
// the catalog writing it batch papers at a time.
func engineWith(ctx context.Context, cfg Config, log *slog.Logger, embedder embed.Embedder, batch int, observe ...func(string, time.Duration, error)) (service, error) {
	store, err := openStore(ctx, cfg, log, embedder.Info())
	if err != nil {
		return service{}, err
	}
	key, err := cfg.cursorKey(ctx, store)
	if err != nil {
		store.Close()
		return service{}, err
	}
	opts := search.Options{Logger: log, QueryTimeout: cfg.QueryEmbedTimeout, CursorKey: key, EmbedMaxTokens: cfg.EmbeddingsMax}
	if len(observe) > 0 {
		opts.Observe = observe[0]
	}
	eng, err := search.NewEngine(store, embedder, opts)
	if err != nil {
		store.Close()
		return service{}, err
	}
	return service{eng: eng, cat: catalog.New(eng, catalog.Options{Logger: log, Batch: batch}), store: store}, nil
}

// openStore opens Qdrant when PAPERSEARCH_QDRANT_URL is set and the
// embedded store otherwise, for vectors of model.
func openStore(ctx context.Context, cfg Config, log *slog.Logger, model embed.ModelInfo) (storage.Store, error) {
	if cfg.QdrantURL != "" {
		store, err := qdrant.Open(ctx, cfg.qdrantConfig(cfg.Collection, log), model)
		if errors.Is(err, storage.ErrModelMismatch) {
			return nil, fmt.Errorf("%w\nto index under %s, set PAPERSEARCH_COLLECTION to a new collection and run 'papersearch ingest' on your corpus", err, model.Name)
		}
		return store, err
	}
	store, err := sqlite.Open(ctx, cfg.storePath(), model)
	if errors.Is(err, storage.ErrModelMismatch) {
		return nil, fmt.Errorf("%w\nto rebuild the index under %s, run 'papersearch reindex' with the same settings (the current index is kept as a backup)",
			err, model.Name)
	}
	return store, err
}

// storeLocation says where the store lives, for logs.
func storeLocation(cfg Config) string {
	if cfg.QdrantURL != "" {
		return cfg.QdrantURL + " collection " + cfg.Collection
	}
	return cfg.storePath()
}

// serve runs the HTTP API until ctx is cancelled, seeding an empty store
// with the shipped corpus first.
func serve(ctx context.Context, cfg Config, log *slog.Logger) error {
	if err := checkAddr(cfg.Addr); err != nil {
		return err // before anything is opened or logged on its account
	}
	// The address first: a port another process holds fails the start
	// before a store is opened (or, on a fresh data folder, created).
	// Connections made meanwhile wait in the listener's queue.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (set PAPERSEARCH_ADDR to use another address): %w", cfg.Addr, err)
	}
	defer ln.Close() // Serve closes it too; this is for a start that fails before it
	metrics := api.NewMetrics()
	svc, count, err := openServing(ctx, cfg, log, metrics.Observe)
	if err != nil {
		return err
	}
	store, eng := svc.store, svc.eng
	defer store.Close()

	var notReady atomic.Pointer[error]
	settled := make(chan struct{}) // closed once seeding ends: /mcp's tools wait for it
	if count == 0 && cfg.Seed {
		// Not ready from the first request on: seeding starts after the
		// listener, and a probe in between must not see an empty store ready.
		pending := fmt.Errorf("seeding the empty store with the %s", seeds.Name)
		notReady.Store(&pending)
	}
	loopback := isLoopback(cfg.Addr)
	if cfg.APIKey == "" && !loopback {
		log.Warn("write endpoints are disabled: set PAPERSEARCH_API_KEY to enable them (papers, collections, imports, alerts, watches)", "addr", cfg.Addr)
	}
	switch {
	case loopback || cfg.PublicURL != "":
	case len(cfg.AllowedHosts) == 0:
		log.Warn("PAPERSEARCH_PUBLIC_URL is unset: feed and alert links name the address each connection arrived at, and only loopback Host names are answered; set it (and PAPERSEARCH_ALLOWED_HOSTS for other names) to the address clients use", "addr", cfg.Addr)
	default:
		log.Warn("PAPERSEARCH_PUBLIC_URL is unset: feed and alert links name the address each connection arrived at; set it to the address clients use", "addr", cfg.Addr)
	}
	trust, err := cfg.trust()
	if err != nil {
		return err
	}
	var saved *alerts.Store
	records, _ := store.(storage.Records)
	if records != nil {
		saved = alerts.New(records)
		if n, err := saved.Migrate(ctx, filepath.Join(cfg.DataDir, "alerts.json")); err != nil {
			return err
		} else if n > 0 {
			log.Info("moved the data folder's alerts into the store", "alerts", n, "store", store.Kind())
		}
	}
	sources := importConfig(cfg, log)
	sources.Clients = imports.NewClients() // one per source: its rate limit holds across imports and watches
	watches, err := openWatches(ctx, cfg, store, svc.cat, sources.Open, log)
	if err != nil {
		return err
	}
	watches.Tick = cfg.WatchTick
	defer watches.Close() // before the store closes: a run under way stops after its batch and resumes at the next start
	keeper := corpusmap.New(eng, log)
	handler := api.New(eng, svc.cat, api.Options{Logger: log, Map: keeper, Alerts: saved, Watches: watches, MaxBody: cfg.MaxBody, Ready: func() error {
		if e := notReady.Load(); e != nil {
			return *e
		}
		return nil
	}, Settled: settled, APIKey: cfg.APIKey, OpenWrites: cfg.APIKey == "" && loopback, Trust: trust, Metrics: metrics,
		RateLimit: api.RateLimit{Rate: cfg.RateLimit, Burst: cfg.RateBurst}, Importer: sources.Open, Records: records,
		ProtectEmbeddings: !cfg.EmbeddingsOpen, EmbedTokens: api.RateLimit{Rate: cfg.EmbeddingsTokens, Burst: cfg.EmbeddingsMax}})
	defer handler.Close() // after the server has drained: running imports stop, keeping what they stored
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	m := store.Model()
	log.Info("papersearch listening", "url", "http://"+ln.Addr().String(), "store", store.Kind(), "at", storeLocation(cfg),
		"papers", count, "model", m.Name, "dim", m.Dim)

	if count == 0 && cfg.Seed {
		err := seed(ctx, svc.cat, log, &notReady)
		close(settled)
		if ctx.Err() != nil {
			log.Warn("seeding interrupted; the papers stored so far are kept and the next start goes on with the rest")
			return shutdown(srv, log)
		}
		if err != nil {
			shutdown(srv, log)
			return err
		}
	}
	if count != 0 || !cfg.Seed {
		close(settled)
	}
	go watches.Run(ctx)
	go keeper.Keep(ctx, cfg.MapTick)
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, log)
}

// seed ingests the shipped corpus into an empty store, reporting progress
// through the readiness check.
func seed(ctx context.Context, cat *catalog.Catalog, log *slog.Logger, notReady *atomic.Pointer[error]) error {
	papers, err := seeds.NeurIPS2026()
	if err != nil {
		return err
	}
	pending := fmt.Errorf("seeding the empty store with %d papers", len(papers))
	notReady.Store(&pending)
	log.Info("store is empty: ingesting the seed corpus", "corpus", seeds.Name, "papers", len(papers))
	// An import is background work: queries served while seeding are
	// encoded first.
	sum, err := cat.Import(ctx, catalog.Papers(papers), catalog.ImportOptions{Progress: func(p catalog.ImportProgress) {
		e := fmt.Errorf("seeding the empty store: %d of %d papers done", p.Stored, len(papers))
		notReady.Store(&e)
	}})
	if err != nil {
		return fmt.Errorf("seed the store: %w", err)
	}
	notReady.Store(nil)
	log.Info("seed corpus ingested", "new", sum.New, "embedded", sum.Embedded, "took", sum.Took.Round(time.Millisecond))
	return nil
}

// isLoopback reports whether addr (host:port) only listens on this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// shutdown stops accepting connections and lets requests in flight finish.
func shutdown(srv *http.Server, log *slog.Logger) error {
	log.Info("shutting down: draining requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// checkAddr checks PAPERSEARCH_ADDR's form, host:port, as net.Listen
// reads it.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("configuration: PAPERSEARCH_ADDR must be host:port, such as 127.0.0.1:8080 or :8080, not %q: %w", addr, err)
	}
	return nil
}
