package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/papersearch/papersearch/search"
)

// Metrics are the service's Prometheus metrics, in a registry of their own.
type Metrics struct {
	registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	ops       *prometheus.HistogramVec
	opErrors  *prometheus.CounterVec
	papersFor func(context.Context) (int, error)
}

// NewMetrics creates the metrics and registers the Go and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "papersearch_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "papersearch_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route", "method"})
	m.ops = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "papersearch_operation_duration_seconds",
		Help:    "Latency of embedding calls (op=embed) and store operations (op=nearest, lexical, lookup, get, upsert, count).",
		Buckets: []float64{.0001, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5, 30},
	}, []string{"op"})
	m.opErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "papersearch_operation_errors_total", Help: "Failed embedding calls and store operations, by op.",
	}, []string{"op"})
	// Every known series exists from the start, at zero, so a dashboard or
	// an alert on a rate sees it before the first error.
	for _, op := range search.Ops() {
		m.ops.WithLabelValues(op)
		m.opErrors.WithLabelValues(op)
	}
	m.registry.MustRegister(m.requests, m.latency, m.ops, m.opErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Observe records one embedding call or store operation; pass it to the
// engine as search.Options.Observe.
func (m *Metrics) Observe(op string, d time.Duration, err error) {
	m.ops.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		m.opErrors.WithLabelValues(op).Inc()
	}
}

// indexed registers the gauge of indexed papers, read from the engine.
func (m *Metrics) indexed(count func(context.Context) (int, error)) {
	if m.papersFor != nil {
		return
	}
	m.papersFor = count
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "papersearch_papers_indexed", Help: "Papers in the index.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := count(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
}

// request counts and times one finished request by its route pattern.
func (m *Metrics) request(c echo.Context, took time.Duration) {
	route := c.Path()
	if route == "" {
		route = "unmatched"
	}
	method := methodName(c.Request().Method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(c.Response().Status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(took.Seconds())
}

func (m *Metrics) handler() echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{}))
}

// methodName is how a request's method is counted and logged: a standard
// one as it is, any other "other". Any token is a method to HTTP, so one
// a client makes up would otherwise grow the metrics' labels without
// bound and put what it likes, as long as it likes, into the log.
func methodName(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}
