package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/papersearch/papersearch/api"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/qdrant"
	"github.com/papersearch/papersearch/search/storage"
)

// envPrefix prefixes every configuration variable.
const envPrefix = "PAPERSEARCH"

// Config is the service's configuration, read from PAPERSEARCH_* variables.
type Config struct {
	Addr         string `envconfig:"ADDR" default:"127.0.0.1:8080" desc:"address the HTTP server listens on"`
	Server       string `envconfig:"SERVER" desc:"base URL of a papersearch service that search, similar, recommend and watch use instead of the local store"`
	DataDir      string `envconfig:"DATA_DIR" desc:"folder of the embedded store (default: the papersearch folder in the user's data folder, e.g. ~/.local/share/papersearch)"`
	Seed         bool   `envconfig:"SEED" default:"true" desc:"ingest the shipped NeurIPS 2026 abstracts when the store is empty"`
	Model        string `envconfig:"MODEL" default:"bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2" desc:"the in-process model, when PAPERSEARCH_EMBED_URL is unset: bge-small-en-v1.5, e5-small-v2, all-MiniLM-L6-v2, or two or three joined by +, their cosines averaged; of three, the first two rank most queries and the third joins for questions whose words the papers barely hold"`
	EmbedWorkers int    `envconfig:"EMBED_WORKERS" default:"0" desc:"texts the local model encodes at once (0: one per CPU)"`
	Precision    string `envconfig:"PRECISION" default:"auto" desc:"the local models' dense-layer arithmetic: auto (each arithmetic the CPU has a SIMD kernel for measured at start-up, the fastest kept; /readyz says which), fp32, bf16 (AMX or AVX-512 BF16) or int8"`

	EmbedURL          string        `envconfig:"EMBED_URL" desc:"base URL of an OpenAI-compatible embeddings API, ending in /v1 (unset: the in-process model)"`
	EmbedAPIKey       string        `envconfig:"EMBED_API_KEY" desc:"API key of the embeddings API (default: $OPENAI_API_KEY)"`
	EmbedModel        string        `envconfig:"EMBED_MODEL" default:"bge-small-en-v1.5+e5-small-v2+all-MiniLM-L6-v2" desc:"model name sent to the embeddings API; several joined by + are asked for one by one and used together (as PAPERSEARCH_MODEL's are); bge-small-en-v1.5 and e5-small-v2, under any organisation prefix, get their instructions"`
	EmbedDimensions   int           `envconfig:"EMBED_DIMENSIONS" desc:"dimensions to request from the embeddings API (unset: the model's own)"`
	EmbedBatch        int           `envconfig:"EMBED_BATCH" default:"128" desc:"most texts in one embeddings request"`
	EmbedBatchTokens  int           `envconfig:"EMBED_BATCH_TOKENS" default:"65536" desc:"most estimated tokens in one embeddings request"`
	EmbedConcurrency  int           `envconfig:"EMBED_CONCURRENCY" default:"4" desc:"embeddings requests in flight at once"`
	EmbedRetryMax     time.Duration `envconfig:"EMBED_RETRY_MAX" default:"2m" desc:"longest time spent retrying one embeddings request"`
	EmbedCache        string        `envconfig:"EMBED_CACHE" desc:"embedding cache that ingest, import, reindex and eval read and fill, so a text a model embedded once is not embedded again: a SQLite file (unset: papersearch/embeddings.db in the user's cache folder; off: none)"`
	QueryEmbedTimeout time.Duration `envconfig:"QUERY_EMBED_TIMEOUT" default:"5s" desc:"deadline for embedding one search query"`

	QdrantURL         string        `envconfig:"QDRANT_URL" desc:"gRPC URL of a Qdrant server or cluster node, e.g. http://127.0.0.1:6334 (https: TLS; unset: the embedded store)"`
	QdrantAPIKey      string        `envconfig:"QDRANT_API_KEY" desc:"API key of the Qdrant server"`
	Collection        string        `envconfig:"COLLECTION" default:"papers" desc:"Qdrant collection to use (created when missing)"`
	QdrantShards      uint32        `envconfig:"QDRANT_SHARDS" desc:"shards of a new Qdrant collection (unset: Qdrant's default)"`
	QdrantReplication uint32        `envconfig:"QDRANT_REPLICATION" desc:"replicas of each shard of a new Qdrant collection (e.g. 2 on a 3-node cluster)"`
	QdrantHNSWM       uint64        `envconfig:"QDRANT_HNSW_M" desc:"edges per node of a new Qdrant collection's HNSW graph (unset: Qdrant's 16)"`
	QdrantHNSWEFBuild uint64        `envconfig:"QDRANT_HNSW_EF_CONSTRUCT" desc:"HNSW build beam of a new Qdrant collection (unset: Qdrant's 100)"`
	QdrantHNSWEF      uint64        `envconfig:"QDRANT_HNSW_EF" desc:"HNSW search beam of every dense query (unset: Qdrant's, at least the candidates asked for)"`
	QdrantOnDisk      bool          `envconfig:"QDRANT_ON_DISK" default:"false" desc:"keep a new Qdrant collection's dense vectors on disk, memory mapped"`
	QdrantOnDiskPay   bool          `envconfig:"QDRANT_ON_DISK_PAYLOAD" default:"false" desc:"keep a new Qdrant collection's payload (titles, abstracts) on disk"`
	QdrantQuantize    string        `envconfig:"QDRANT_QUANTIZATION" desc:"int8 (unset: the default) or none: a new Qdrant collection's vectors also as int8 codes in RAM, searched first and rescored"`
	ArxivURL          string        `envconfig:"ARXIV_URL" default:"https://export.arxiv.org/api/query" desc:"arXiv query API that import arxiv reads (one request per 3 s)"`
	OpenAlexURL       string        `envconfig:"OPENALEX_URL" default:"https://api.openalex.org" desc:"OpenAlex API that import openalex reads"`
	OpenAlexEmail     string        `envconfig:"OPENALEX_EMAIL" desc:"your e-mail, sent to OpenAlex as mailto to use its polite pool"`
	OpenReviewURL     string        `envconfig:"OPENREVIEW_URL" default:"https://api2.openreview.net" desc:"OpenReview API v2 that import openreview reads"`
	WatchTick         time.Duration `envconfig:"WATCH_TICK" default:"30s" desc:"how often the server looks for watches due to run (papersearch watch)"`
	MapTick           time.Duration `envconfig:"MAP_TICK" default:"30s" desc:"how often the server looks whether the map of the corpus (GET /v1/map) is due to be laid out again: first, then once 5% of its papers (at least 100) have changed"`
	MaxBody           int64         `envconfig:"MAX_BODY" default:"1048576" desc:"largest accepted request body, in bytes"`
	APIKey            string        `envconfig:"API_KEY" desc:"bearer token of every write (papers, collections, imports, alerts, watches), of reading imports, alerts and watches, and of POST /v1/embeddings unless PAPERSEARCH_EMBEDDINGS_OPEN (unset: those only when listening on loopback)"`
	PublicURL         string        `envconfig:"PUBLIC_URL" desc:"the service's base URL as its clients reach it, e.g. https://papers.example.org: feed and alert links are built from it and its host is answered for (unset: links name the listen address)"`
	AllowedHosts      []string      `envconfig:"ALLOWED_HOSTS" desc:"comma-separated Host header values answered for besides loopback names and addresses and PAPERSEARCH_PUBLIC_URL's host: names, *.domain, IP addresses, CIDR prefixes, or * for any; other hosts get 421 (DNS rebinding)"`
	TrustedProxies    []string      `envconfig:"TRUSTED_PROXIES" desc:"comma-separated IP addresses or CIDR prefixes of reverse proxies whose PROXY_HEADER names the client, for the key rule, rate limits and logs (unset: every client is the connection's peer)"`
	ProxyHeader       string        `envconfig:"PROXY_HEADER" default:"X-Forwarded-For" desc:"the forwarding header the trusted proxies write, X-Forwarded-For or Forwarded; the other is a client's claim and never read"`
	CursorKey         string        `envconfig:"CURSOR_KEY" desc:"secret that signs page cursors (unset: a random key made once and kept in the store, which every instance on it shares)"`
	RateLimit         float64       `envconfig:"RATE_LIMIT" default:"20" desc:"requests per second allowed per client address (0: no limit; health and metrics exempt)"`
	RateBurst         int           `envconfig:"RATE_BURST" default:"40" desc:"burst of requests allowed per client address"`
	EmbeddingsOpen    bool          `envconfig:"EMBEDDINGS_OPEN" default:"false" desc:"serve POST /v1/embeddings without the API key even beyond loopback (by default it follows the write endpoints' key rule)"`
	EmbeddingsTokens  float64       `envconfig:"EMBEDDINGS_TOKEN_RATE" default:"8192" desc:"tokens per second each client address may have embedded through /v1/embeddings (0: no limit)"`
	EmbeddingsMax     int           `envconfig:"EMBEDDINGS_MAX_TOKENS" default:"131072" desc:"most tokens of one /v1/embeddings request, its distinct inputs as the model counts them"`
	LogLevel          string        `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	ProgressEvery     time.Duration `envconfig:"PROGRESS_EVERY" default:"2s" desc:"how often ingest prints a progress line when not on a terminal (0: at every report, every few papers)"`
	LogFormat         string        `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
}

// kindOf names, for a person, the values a setting of Go type typ takes.
func kindOf(typ string) string {
	switch {
	case typ == "bool":
		return "true or false"
	case strings.HasSuffix(typ, "Duration"):
		return "a duration such as 500ms, 30s or 5m"
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"):
		return "a whole number"
	case strings.HasPrefix(typ, "float"):
		return "a number"
	}
	return "a " + typ
}

func loadConfig() (Config, error) {
	var cfg Config
	if err := envconfig.Process(envPrefix, &cfg); err != nil {
		var pe *envconfig.ParseError
		if errors.As(err, &pe) {
			return cfg, fmt.Errorf("configuration: %s=%q is not %s: %w", pe.KeyName, pe.Value, kindOf(pe.TypeName), pe.Err)
		}
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	if cfg.DataDir == "" {
		dir, err := userDataDir()
		if err != nil {
			return cfg, fmt.Errorf("configuration: no %s_DATA_DIR and %w", envPrefix, err)
		}
		cfg.DataDir = filepath.Join(dir, "papersearch")
	}
	if cfg.EmbedAPIKey == "" {
		cfg.EmbedAPIKey = os.Getenv("OPENAI_API_KEY")
	}
	if cfg.EmbeddingsTokens < 0 || cfg.EmbeddingsMax < 1 {
		return cfg, fmt.Errorf("configuration: PAPERSEARCH_EMBEDDINGS_TOKEN_RATE must be 0 or more and PAPERSEARCH_EMBEDDINGS_MAX_TOKENS at least 1")
	}
	if cfg.RateLimit < 0 || cfg.RateLimit > 0 && cfg.RateBurst < 1 {
		return cfg, fmt.Errorf("configuration: %s_RATE_LIMIT must be 0 or more and %s_RATE_BURST at least 1", envPrefix, envPrefix)
	}
	if _, err := cfg.trust(); err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	if cfg.MaxBody <= 0 {
		return cfg, fmt.Errorf("configuration: %s_MAX_BODY must be positive", envPrefix)
	}
	return cfg, nil
}

// trust is what the server believes of a request's origin
// (PAPERSEARCH_PUBLIC_URL, _ALLOWED_HOSTS, _TRUSTED_PROXIES).
func (c Config) trust() (api.Trust, error) {
	return api.NewTrust(c.PublicURL, c.AllowedHosts, c.TrustedProxies, c.ProxyHeader)
}

// storePath is the embedded store's database file.
func (c Config) storePath() string { return filepath.Join(c.DataDir, "papersearch.db") }

// qdrantConfig is the Qdrant store's configuration for a collection.
func (c Config) qdrantConfig(collection string, log *slog.Logger) qdrant.Config {
	return qdrant.Config{URL: c.QdrantURL, APIKey: c.QdrantAPIKey, Collection: collection,
		Shards: c.QdrantShards, Replication: c.QdrantReplication,
		HNSWM: c.QdrantHNSWM, HNSWEFConstruct: c.QdrantHNSWEFBuild, HNSWEF: c.QdrantHNSWEF,
		OnDiskVectors: c.QdrantOnDisk, OnDiskPayload: c.QdrantOnDiskPay, Quantization: c.QdrantQuantize, Logger: log}
}

// localOptions are the in-process model's settings: auto's measurement is
// shared by every process of the machine through the choice file in the
// user's cache folder (none where there is no such folder).
func (c Config) localOptions(log *slog.Logger) embed.LocalOptions {
	choices, _ := embed.DefaultChoicePath()
	return embed.LocalOptions{Workers: c.EmbedWorkers, Precision: embed.Precision(c.Precision), ChoiceFile: choices, Logger: log}
}

// userDataDir is the per-user folder for application data:
// $XDG_DATA_HOME or ~/.local/share on Unix, Application Support on macOS,
// %LocalAppData% on Windows.
func userDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set")
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}

func newLogger(cfg Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("configuration: %s_LOG_LEVEL: %w", envPrefix, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(cfg.LogFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("configuration: %s_LOG_FORMAT must be text or json, not %q", envPrefix, cfg.LogFormat)
}

// printUsage writes the command's help: subcommands and every variable.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `papersearch: semantic search over research-paper abstracts.

Usage:
  papersearch [serve]                 serve the HTTP API (the default)
  papersearch ingest FILE...          add papers from seed-text or JSONL files (.gz too)
  papersearch import SOURCE FILE|QUERY|VENUE [--tag T]...
                                      add papers from a library export, arXiv, OpenAlex or OpenReview: bibtex FILE,
                                      csl FILE, arxiv-snapshot FILE [--category cs.]..., arxiv QUERY [--max N],
                                      openalex FILTER [--max N], openreview VENUE_ID;
                                      each gets the tags and its source's ("arxiv", "neurips-2026");
                                      records without an abstract are listed
  papersearch search [flags] QUERY    print the papers that best answer QUERY
  papersearch similar [flags] ID      print the papers most like paper ID
  papersearch recommend [flags] TAG   print the papers outside collection TAG that fit it best
  papersearch watch add SOURCE TARGET [flags] | list | rm ID | run ID
                                      keep an arXiv query, OpenReview venue or OpenAlex filter imported
                                      by itself, on its interval, each run going on from the last
  papersearch reindex                 re-embed the whole index under the configured model
  papersearch mcp                     serve the Model Context Protocol on stdin/stdout (AI assistants)
  papersearch eval --corpus C --queries Q --qrels R [--mode all] [--json] [--fusion-sweep]
                                      measure nDCG@10, recall@100 and MRR@10 on BEIR files
  papersearch eval --corpus C --titles
                                      measure search by each document's title
  papersearch eval --corpus C --recommend
                                      measure recommendations: recall@20 and nDCG@20 per method
  papersearch bench [--papers F] [--clients C] [--duration D] [--store embedded|qdrant]
                    [--vectors model|hash] [--synthetic N] [--json]
                                      measure ingest, latency, throughput, memory and disk
  papersearch help                    print this help
  papersearch COMMAND -h              print a command's usage and flags

Flags of search, similar and recommend:
  --limit N                 number of results, 1 to 100 (default 10)
  --json                    print the API's JSON instead of a table
  --mode M                  hybrid (default), dense or lexical (not recommend)
  --year-min Y, --year-max Y, --venue V..., --author A, --tag T...
  --since D, --until D, --by published|added
                            the API's filters
  --aspect A                rank by the background, method or result sentences (not recommend)
  --method M                recommend's: neighbours (default), centroid, rocchio or logistic

Configuration is read from the environment:

`)
	var cfg Config
	format := "{{range .}}  {{usage_key .}}\n      {{usage_description .}}{{if usage_default .}} (default {{usage_default .}}){{end}}\n{{end}}"
	if err := envconfig.Usagef(envPrefix, &cfg, w, format); err != nil {
		fmt.Fprintln(w, err)
	}
}

// settingHint names the settings to fix for an error that settings cause,
// or returns "": the libraries say what went wrong, the command knows which
// variable sets it.
func settingHint(err error) string {
	switch {
	case errors.Is(err, embed.ErrAPIKey):
		return "Set PAPERSEARCH_EMBED_API_KEY (or OPENAI_API_KEY) to a key the embedding endpoint accepts."
	case errors.Is(err, embed.ErrModelNotServed):
		return "Check PAPERSEARCH_EMBED_MODEL, and that PAPERSEARCH_EMBED_URL ends with /v1."
	case errors.Is(err, embed.ErrDimensions):
		return "Set PAPERSEARCH_EMBED_MODEL or PAPERSEARCH_MODEL to the model the index was built with, or run 'papersearch reindex'."
	}
	if p := (*wire.Problem)(nil); errors.As(err, &p) && p.Status == http.StatusUnauthorized {
		return "Set PAPERSEARCH_API_KEY to the API key of the server at PAPERSEARCH_SERVER."
	}
	return ""
}

// cursorKey is the secret that signs page cursors: PAPERSEARCH_CURSOR_KEY,
// else the one kept in the store's records (made once, at random, or
// taken from the cursor.key an earlier version kept in the data folder),
// so that every instance on the store and every restart accept the
// cursors any of them gave.
func (c Config) cursorKey(ctx context.Context, store storage.Store) ([]byte, error) {
	if c.CursorKey != "" {
		return []byte(c.CursorKey), nil
	}
	records, ok := store.(storage.Records)
	if !ok {
		return nil, fmt.Errorf("cursor key: the %s store keeps no records; set PAPERSEARCH_CURSOR_KEY", store.Kind())
	}
	if key, err := records.GetRecord(ctx, "service", "cursor-key"); err == nil && len(key) >= 32 {
		return key, nil
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	key, err := os.ReadFile(filepath.Join(c.DataDir, "cursor.key"))
	if err != nil || len(key) < 32 {
		key = make([]byte, 32)
		rand.Read(key)
	}
	if err := records.PutRecord(ctx, "service", "cursor-key", key); err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	// Two instances starting at once may each have written one: both go
	// on with the one kept last.
	if key, err = records.GetRecord(ctx, "service", "cursor-key"); err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	return key, nil
}
