package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v5"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"

	"github.com/papersearch/papersearch/internal/limitbody"
)

// OpenAIConfig configures an OpenAI-compatible embeddings client. Zero
// fields take the defaults named on each.
type OpenAIConfig struct {
	// BaseURL is the API base, including its version path, e.g.
	// "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1".
	BaseURL string
	APIKey  string
	Model   string
	// Dimensions, if set, is requested from the endpoint and checked on every
	// vector. If zero, the dimension is learnt from a first request.
	Dimensions int
	// BatchSize bounds the texts in one request (default 128).
	BatchSize int
	// BatchTokens bounds the estimated tokens in one request (default 65536).
	BatchTokens int
	// Concurrency bounds the requests in flight (default 4).
	Concurrency int
	// MaxRetryTime bounds the time spent retrying one request (default 2m).
	MaxRetryTime time.Duration
	// RequestTimeout bounds one HTTP attempt (default 5m); an attempt
	// after a failure is bounded by what is left of MaxRetryTime too, so
	// that retrying an endpoint that took a request and never answered
	// ends within the retry budget. (The first attempt is not: a slow
	// endpoint's batch may take longer than a short budget.)
	RequestTimeout time.Duration
	// ProbeTimeout bounds NewOpenAI's one-text request for the model's
	// dimension, retries included: an endpoint that takes connections and
	// never answers stops the start within it, naming the URL, instead of
	// holding it for a request's five minutes with nothing said.
	ProbeTimeout time.Duration
	// HTTPClient, if set, sends the requests; its Transport is wrapped.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Defaults of OpenAIConfig.
const (
	DefaultBatchSize      = 128
	DefaultBatchTokens    = 65536
	DefaultConcurrency    = 4
	DefaultMaxRetryTime   = 2 * time.Minute
	DefaultRequestTimeout = 5 * time.Minute
	DefaultProbeTimeout   = time.Minute
)

// Caps of one response of the endpoint, counted after decompression: a
// client refuses a response over max(MaxResponseBytes, BatchSize ×
// MaxResponseBytesPerText) with an error wrapping ErrTooLarge, without
// retrying.
const (
	// MaxResponseBytes is the cap at the default batch: 64 MiB, 7.5 times
	// the response to DefaultBatchSize texts of 3072-dimension vectors (the
	// largest OpenAI model's) as OpenAI writes them, one number a line:
	// 66.5 KB a vector, 8.5 MB the batch.
	MaxResponseBytes = 64 << 20
	// MaxResponseBytesPerText raises the cap of a larger batch: 128 KiB a
	// text holds a vector of about 5,900 dimensions written so, and a
	// batch of 2048 texts (the most OpenAI takes, 136 MB at 3072
	// dimensions) is capped at 256 MiB.
	MaxResponseBytesPerText = 128 << 10
)

// maxWindowDepth bounds how often a text the endpoint rejects as too long is
// halved: at most 2^4 = 16 windows.
const maxWindowDepth = 4

// OpenAI embeds texts through an OpenAI-compatible /embeddings endpoint
// (OpenAI, Ollama, vLLM, Hugging Face TEI, llama.cpp server, papersearch).
// Texts are batched by count and by estimated tokens, batches run with
// bounded concurrency, and failures that can pass (429, 5xx, dropped
// connections, timeouts, malformed responses) are retried with exponential
// backoff and jitter, honouring Retry-After. Vectors are returned in input
// order and L2-normalised. An OpenAI is safe for concurrent use.
type OpenAI struct {
	client *openai.Client
	cfg    OpenAIConfig
	dim    int
	log    *slog.Logger
}

// Errors the OpenAI client reports; each is wrapped with what to fix.
var (
	// ErrEndpoint is wrapped by every error of the embedding endpoint.
	ErrEndpoint = errors.New("embedding endpoint error")
	// ErrUnavailable is wrapped by an error of a request whose every
	// attempt failed in a way a later try may not (the endpoint down,
	// unreachable, overloaded, answering 429 or 5xx) until retrying gave
	// up: callers may answer "unavailable, retry later".
	ErrUnavailable = errors.New("the embedding endpoint is unavailable")
	// ErrBadResponse marks a response that does not match its request.
	ErrBadResponse = errors.New("embedding endpoint returned an invalid response")
	// ErrAPIKey marks a refused API key (HTTP 401).
	ErrAPIKey = errors.New("the endpoint refused the API key")
	// ErrModelNotServed marks an HTTP 404: the endpoint does not serve the
	// model, or the base URL is wrong (it should end with /v1).
	ErrModelNotServed = errors.New("unknown model or wrong URL (the base URL should end with /v1)")
	// ErrDimensions marks vectors of another length than the index's: the
	// endpoint serves another model than the one the index was built with.
	ErrDimensions = errors.New("the endpoint's model is not the one the index was built with")
	// ErrTooLarge marks a response over the client's cap (MaxResponseBytes,
	// more for a batch of over 512 texts), counted decompressed.
	ErrTooLarge = limitbody.ErrTooLarge
)

// DimensionError is a vector of another length than the model's: the
// model answering is not the one the index was built with. It matches
// ErrDimensions (errors.Is).
type DimensionError struct {
	// Model names the model asked for, whose vectors the index holds.
	Model string
	// Got is the length of the vector answered; Want the model's dimension.
	Got, Want int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("the embedding endpoint's model %s answered %d-dimensional vectors; the index holds %d-dimensional vectors of %s: %v",
		e.Model, e.Got, e.Want, e.Model, ErrDimensions)
}

// Is reports whether target is ErrDimensions.
func (e *DimensionError) Is(target error) bool { return target == ErrDimensions }

// NewOpenAI returns a client for cfg. When cfg.Dimensions is zero it embeds
// one short text to learn the model's dimension, so a wrong URL, key or
// model is reported here rather than halfway through an ingest; that
// request has cfg.ProbeTimeout, retries included.
func NewOpenAI(ctx context.Context, cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("embedding endpoint: a base URL and a model name are required")
	}
	setDefault(&cfg.BatchSize, DefaultBatchSize)
	setDefault(&cfg.BatchTokens, DefaultBatchTokens)
	setDefault(&cfg.Concurrency, DefaultConcurrency)
	setDefault(&cfg.MaxRetryTime, DefaultMaxRetryTime)
	setDefault(&cfg.RequestTimeout, DefaultRequestTimeout)
	setDefault(&cfg.ProbeTimeout, DefaultProbeTimeout)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		*hc = *cfg.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	limit := max(MaxResponseBytes, int64(cfg.BatchSize)*MaxResponseBytesPerText)
	hc.Transport = retryAfterTransport{base: limitbody.Transport{Base: base, Limit: limit}}
	// A redirect is not followed: it would send the texts, and the API key
	// where the host is the same, to whatever the answer names.
	hc.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("%w to %s", errRedirect, req.URL.Redacted())
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = hc
	c := &OpenAI{client: openai.NewClientWithConfig(oc), cfg: cfg, dim: cfg.Dimensions, log: log}
	if c.dim == 0 {
		log.Info("asking the embedding endpoint for its model's dimension", "url", cfg.BaseURL, "model", cfg.Model, "within", cfg.ProbeTimeout)
		pctx, cancel := context.WithTimeout(ctx, cfg.ProbeTimeout)
		v, err := c.Embed(pctx, []string{"dimension probe"})
		cancel()
		if err != nil {
			if pctx.Err() != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("embedding endpoint %s: no answer to one short text within %v: %w", cfg.BaseURL, cfg.ProbeTimeout, err)
			}
			return nil, err
		}
		c.dim = len(v[0])
		log.Info("embedding endpoint ready", "url", cfg.BaseURL, "model", cfg.Model, "dim", c.dim)
	}
	return c, nil
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Info names the endpoint's model and its dimension.
func (c *OpenAI) Info() ModelInfo { return ModelInfo{Name: c.cfg.Model, Dim: c.dim} }

// Embed returns one unit vector per text, in the order of texts.
func (c *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ErrEmptyInput
	}
	out := make([][]float32, len(texts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, b := range c.batches(texts) {
		g.Go(func() error {
			vecs, err := c.embedBatch(gctx, texts[b.start:b.end])
			if err != nil {
				return fmt.Errorf("embed texts %d-%d of %d: %w", b.start+1, b.end, len(texts), err)
			}
			copy(out[b.start:b.end], vecs)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

type span struct{ start, end int }

// batches cuts texts into runs of at most BatchSize texts and about
// BatchTokens estimated tokens each.
func (c *OpenAI) batches(texts []string) []span {
	var out []span
	start, tokens := 0, 0
	for i, t := range texts {
		n := EstimateTokens(t)
		if i > start && (i-start >= c.cfg.BatchSize || tokens+n > c.cfg.BatchTokens) {
			out = append(out, span{start, i})
			start, tokens = i, 0
		}
		tokens += n
	}
	return append(out, span{start, len(texts)})
}

// EstimateTokens approximates the tokens of text for batching: about four
// bytes of English per token, and at least one.
func EstimateTokens(text string) int { return len(text)/4 + 1 }

// embedBatch embeds one batch with retries. A batch the endpoint finds too
// large is split in two; a single text it finds too long is embedded in
// windows whose vectors are averaged.
func (c *OpenAI) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := c.request(ctx, texts)
	if err == nil || !errors.Is(err, errTooLong) {
		return vecs, err
	}
	if len(texts) > 1 {
		half := len(texts) / 2
		c.log.Debug("embedding endpoint rejected a batch as too large; splitting it", "texts", len(texts))
		left, err := c.embedBatch(ctx, texts[:half])
		if err != nil {
			return nil, err
		}
		right, err := c.embedBatch(ctx, texts[half:])
		if err != nil {
			return nil, err
		}
		return append(left, right...), nil
	}
	v, err := c.embedWindows(ctx, texts[0], 1)
	if err != nil {
		return nil, err
	}
	return [][]float32{v}, nil
}

// embedWindows embeds a text too long for the endpoint as two halves, split
// at a word boundary, and returns the length-weighted mean of their vectors.
func (c *OpenAI) embedWindows(ctx context.Context, text string, depth int) ([]float32, error) {
	if depth > maxWindowDepth {
		return nil, fmt.Errorf("%w: a text of %d bytes is too long even in %d windows", ErrEndpoint, len(text), 1<<maxWindowDepth)
	}
	halves := splitHalves(text)
	sum := make([]float32, 0)
	for _, h := range halves {
		vecs, err := c.request(ctx, []string{h})
		var v []float32
		switch {
		case errors.Is(err, errTooLong):
			v, err = c.embedWindows(ctx, h, depth+1)
			if err != nil {
				return nil, err
			}
		case err != nil:
			return nil, err
		default:
			v = vecs[0]
		}
		if len(sum) == 0 {
			sum = make([]float32, len(v))
		}
		w := float32(len(h))
		for i := range v {
			sum[i] += w * v[i]
		}
	}
	Normalize(sum)
	return sum, nil
}

// splitHalves cuts text in two at the white space nearest its middle.
func splitHalves(text string) []string {
	mid := len(text) / 2
	cut := strings.LastIndexAny(text[:mid], " \n\t")
	if cut <= 0 {
		cut = mid
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
	}
	return []string{strings.TrimSpace(text[:cut]), strings.TrimSpace(text[cut:])}
}

// errTooLong marks a rejection of input that is too long or too large.
var errTooLong = errors.New("input too long for the embedding endpoint")

// request sends one embeddings request, retrying what can pass.
func (c *OpenAI) request(ctx context.Context, texts []string) ([][]float32, error) {
	attempt, retryable, failed, began := 0, false, false, time.Now()
	op := func() (_ [][]float32, err error) {
		attempt++
		defer func() {
			var permanent *backoff.PermanentError
			retryable = err != nil && !errors.As(err, &permanent)
			failed = failed || retryable
		}()
		timeout := c.cfg.RequestTimeout
		if attempt > 1 {
			timeout = min(timeout, max(c.cfg.MaxRetryTime-time.Since(began), time.Second))
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		slot := new(string)
		actx = context.WithValue(actx, retryAfterKey{}, slot)
		resp, err := c.client.CreateEmbeddings(actx, openai.EmbeddingRequestStrings{
			Input:          texts,
			Model:          openai.EmbeddingModel(c.cfg.Model),
			Dimensions:     c.cfg.Dimensions,
			EncodingFormat: openai.EmbeddingEncodingFormatFloat,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, backoff.Permanent(ctx.Err())
			}
			return nil, c.classify(err, *slot)
		}
		vecs, err := c.check(resp, len(texts))
		if err != nil {
			return nil, err
		}
		return vecs, nil
	}
	vecs, err := backoff.Retry(ctx, op,
		backoff.WithBackOff(backoff.NewExponentialBackOff()),
		backoff.WithMaxElapsedTime(c.cfg.MaxRetryTime),
		backoff.WithNotify(func(err error, wait time.Duration) {
			c.log.Warn("embedding request failed; retrying", "error", err, "attempt", attempt, "wait", wait.Round(time.Millisecond))
		}))
	// The last attempt failed in a way a later one may not, and retrying
	// gave up or ran out of its caller's time, or an attempt after such a
	// failure was cut short by the caller's deadline: the endpoint did not
	// answer. (A caller that went away says nothing of it, nor does a
	// deadline that cut short the first attempt: the endpoint may be slow,
	// not down.)
	deadline := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if err != nil && (retryable || failed && deadline) && !errors.Is(ctx.Err(), context.Canceled) {
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err != nil && attempt > 1 && !errors.Is(err, errTooLong) {
		return nil, fmt.Errorf("after %d attempts: %w", attempt, err)
	}
	return vecs, err
}
