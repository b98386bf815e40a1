package api

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/catalog/imports"
)

// DefaultMaxChars is how much of each result's abstract an MCP tool
// returns unless asked for another length: enough to judge a paper, short
// enough for ten of them in an assistant's context.
const DefaultMaxChars = 600

// MCPSearch is the input of the MCP search tool: a search request as POST
// /v1/search takes it, and how much of each abstract to return.
type MCPSearch struct {
	wire.SearchRequest
	MaxChars int `json:"max_chars,omitempty" jsonschema:"at most this many characters of each result's abstract (default 600; 0 or absent: the default)"`
}

// MCPSimilar is the input of the MCP similar tool: the parameters of GET
// /v1/papers/{id}/similar.
type MCPSimilar struct {
	ID        string              `json:"id" jsonschema:"the paper's id (or one of its source ids, such as arxiv:2401.01234)"`
	Aspect    string              `json:"aspect,omitempty" jsonschema:"compare the paper's sentences of this role with other papers': background, method or result (absent: the whole paper)"`
	Sentences []int               `json:"sentences,omitempty" jsonschema:"compare exactly these of its sentences (0-based places in the abstract)"`
	Mode      string              `json:"mode,omitempty" jsonschema:"hybrid (default), dense or lexical"`
	Limit     *int                `json:"limit,omitempty" jsonschema:"how many results, 1 to 100 (default 10)"`
	Filters   *papersearch.Filter `json:"filters,omitempty" jsonschema:"restrict the papers considered"`
	Explain   bool                `json:"explain,omitempty" jsonschema:"say why each result was returned, with the sentences that matched"`
	Cursor    string              `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	MaxChars  int                 `json:"max_chars,omitempty" jsonschema:"at most this many characters of each result's abstract (default 600)"`
}

// MCPRecommend is the input of the MCP recommend tool: the parameters of
// GET /v1/collections/{tag}/recommendations.
type MCPRecommend struct {
	Tag      string              `json:"tag" jsonschema:"the collection: a tag papers hold (see list_collections)"`
	Method   string              `json:"method,omitempty" jsonschema:"how the collection ranks papers: neighbours (default), centroid, rocchio or logistic"`
	Limit    *int                `json:"limit,omitempty" jsonschema:"how many results, 1 to 100 (default 10)"`
	Filters  *papersearch.Filter `json:"filters,omitempty" jsonschema:"restrict the papers recommended (since with by=added: what came in since then)"`
	Cursor   string              `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	MaxChars int                 `json:"max_chars,omitempty" jsonschema:"at most this many characters of each result's abstract (default 600)"`
}

// MCPImport is the input of the MCP import_status tool.
type MCPImport struct {
	ID string `json:"id" jsonschema:"the import's id, as the import tool answered it"`
}

// MCPPaper is the input of the MCP get_paper tool.
type MCPPaper struct {
	ID string `json:"id" jsonschema:"the paper's id (or one of its source ids)"`
}

// mcpPath is where Server answers MCP's streamable HTTP transport.
const mcpPath = "/mcp"

// singleMessages serves h, refusing a POST whose body is a JSON-RPC batch
// (an array): MCP's 2025-06-18 revision removed batches, and one request
// running hundreds of tool calls passed the rate limit, which counts
// requests, as one (500 searches a request).
func singleMessages(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			br := bufio.NewReader(r.Body)
			for {
				c, err := br.ReadByte()
				if err != nil {
					break
				}
				if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
					continue // JSON's white space, which no message needs
				}
				if c == '[' {
					http.Error(w, "the body is a JSON-RPC batch: send one message a request (MCP's 2025-06-18 revision has no batches)", http.StatusBadRequest)
					return
				}
				br.UnreadByte()
				break
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{br, r.Body}
		}
		h.ServeHTTP(w, r)
	})
}

// paperURIPrefix begins the URI of a paper as an MCP resource.
const paperURIPrefix = "papersearch://papers/"

// MCP is the Model Context Protocol server of s, the one s answers at
// /mcp: serve it over stdio too (mcp.IOTransport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// newMCP returns the Model Context Protocol server over s's engine: the
// tools search, similar, get_paper, list_collections, related_for_text,
// import and import_status, answering what the HTTP API answers for the
// same request (import and import_status under the write routes' key
// rule, see authorize), and every paper as the resource
// papersearch://papers/{id}.
func newMCP(s *Server) *mcp.Server {
	version := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "papersearch", Title: "papersearch", Version: version}, &mcp.ServerOptions{
		Instructions: "Semantic search over research-paper abstracts. Ask `search` a question in plain words " +
			"(or give it paper ids to find more like them), `similar` for the papers closest to one paper, " +
			"`related_for_text` for the papers that support a paragraph of a draft, `get_paper` for one paper whole, " +
			"`list_collections` for the tags that scope a search (filters.tags), `recommend` for the papers that fit a collection, " +
			"`import` and `import_status` to add papers. " +
			"Results name each paper's id, title, venue, year and URL.",
	})
	srv.AddReceivingMiddleware(s.recovering, s.settlingTools)
	// What each tool does to the store, for an assistant deciding what
	// to ask its user before a call (MCP's defaults for a tool without
	// annotations are "may destroy, reaches the open world"): every tool
	// but import only reads this server's papers; import adds papers or
	// updates them in place, never deletes, and may fetch from the
	// network sources.
	readOnlyTool := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	importTool := &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "search",
		InputSchema: toolInput[MCPSearch](),
		Annotations: readOnlyTool,
		Title:       "Search papers",
		Description: "The papers that best answer a question in plain words, best first, as POST /v1/search answers: " +
			"query, like/unlike (paper ids to move toward or away from), filters (year_min, year_max, venues, author, tags), " +
			"mode (hybrid, dense, lexical), aspect (background, method, result), limit, cursor, explain.",
	}, s.mcpSearch)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "similar",
		InputSchema: toolInput[MCPSimilar](),
		Annotations: readOnlyTool,
		Title:       "Papers similar to a paper",
		Description: "The papers most like one paper (never the paper itself), as GET /v1/papers/{id}/similar answers; " +
			"aspect compares its background, method or result sentences with other papers'.",
	}, s.mcpSimilar)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "related_for_text",
		InputSchema: toolInput[MCPRelated](),
		Annotations: readOnlyTool,
		Title:       "Papers related to a draft paragraph",
		Description: "The papers that support or relate to a paragraph of a draft: each of its sentences (up to 12) is searched " +
			"as a question, the rankings fused; each result names the draft's sentence it answers best and its own closest sentence.",
	}, s.mcpRelated)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "list_collections",
		Annotations: readOnlyTool,
		Title:       "List collections",
		Description: "Every collection (tag) the stored papers hold, with how many papers hold it, as GET /v1/collections answers; a tag scopes search and similar (filters.tags).",
	}, s.mcpCollections)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "recommend",
		InputSchema: toolInput[MCPRecommend](),
		Annotations: readOnlyTool,
		Title:       "Recommendations for a collection",
		Description: "The papers outside a collection (tag) that fit it best, each naming the members it is nearest to (because), " +
			"as GET /v1/collections/{tag}/recommendations answers; papers marked not interested for it are never returned.",
	}, s.mcpRecommend)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "get_paper",
		Annotations: readOnlyTool,
		Title:       "Get a paper",
		Description: "One paper whole: id, title, abstract, authors, venue, year, URL, tags and sources, as GET /v1/papers/{id} answers.",
	}, s.mcpGetPaper)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "import",
		InputSchema: importInput(),
		Annotations: importTool,
		Title:       "Import papers",
		Description: "Start importing papers in the background, as POST /v1/imports does (needs the server's API key over HTTP): " +
			"source " + imports.Names(imports.NetworkSources()) + " with target (what the source is asked for: a query, a filter, a venue id) and max, or " +
			imports.Names(imports.UploadSources()) + " with the file in content; " +
			"tags for every paper. Answers the job; import_status follows it.",
	}, s.mcpImport)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "import_status",
		Annotations: readOnlyTool,
		Title:       "An import's progress",
		Description: "An import's progress: records read, papers stored, rejected records and why, its end; as GET /v1/imports/{id} answers.",
	}, s.mcpImportStatus)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "paper",
		Title:       "A paper",
		URITemplate: paperURIPrefix + "{+id}", // reserved expansion: an id's colon and slash as they are, or percent-encoded
		Description: "A paper's title, abstract and metadata as JSON (application/json), or its BibTeX entry (application/x-bibtex).",
		MIMEType:    "application/json",
	}, s.mcpPaperResource)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "collection",
		Title:       "A collection's papers",
		URITemplate: collectionURIPrefix + "{tag}",
		Description: "The papers of a collection (tag): each one's id, title, year and resource URI (papersearch://papers/{id}), as JSON.",
		MIMEType:    "application/json",
	}, s.mcpCollectionResource)
	return srv
}

// requestHeader is the HTTP header a tool call came with; empty over stdio.
func requestHeader(req *mcp.CallToolRequest) http.Header {
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		return req.Extra.Header
	}
	return http.Header{}
}

// mcpID is the paper id an MCP tool or resource names, checked as the
// HTTP API checks one in a path (a resource's URI holds it
// percent-encoded, as url.PathEscape writes it: a literal % is %25).
func mcpID(raw string) (string, error) {
	if !papersearch.ValidID(raw) {
		return "", &papersearch.FieldError{Field: "id", Err: papersearch.ErrBadID} // its words name the field
	}
	return papersearch.CanonicalID(raw), nil
}

// getPaper is one paper as GET /v1/papers/{id} answers it.
func getPaper(ctx context.Context, engine Engine, id string) (papersearch.Paper, error) {
	p, err := engine.Get(ctx, id)
	if err != nil {
		return p, err
	}
	if p.Authors == nil {
		p.Authors = []string{}
	}
	return p, nil
}

// toolError is err as an MCP tool error: the problem body's title, status
// and detail, as the HTTP API would answer, logged as errorHandler logs a
// request's failure.
func (s *Server) toolError(req *mcp.CallToolRequest, err error) error {
	p := toProblem(err)
	tool := ""
	if req != nil && req.Params != nil {
		tool = req.Params.Name
	}
	switch {
	case p.Status == http.StatusServiceUnavailable:
		s.log.Warn("MCP tool failed: a dependency is unavailable", "tool", tool, "error", err)
	case p.Status >= http.StatusInternalServerError:
		s.log.Error("MCP tool failed", "tool", tool, "error", err)
	}
	return fmt.Errorf("%s (status %d): %s", p.Title, p.Status, p.Detail)
}

// recovering turns a panic in any MCP method's handler (a tool's, a
// resource's) into an internal error, logged, as recoverPanics does for
// HTTP: the SDK runs handlers on goroutines of its own, which nothing else
// guards.
func (s *Server) recovering(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in an MCP handler", "method", method, "panic", r, "stack", string(debug.Stack()))
				res, err = nil, errors.New("internal error; it has been logged")
			}
		}()
		return next(ctx, method, req)
	}
}

// DefaultSettleWait is how long an MCP tool or resource waits for the
// store to settle (Options.Settled) before it answers that the service is
// still indexing: seeding the 19 shipped papers takes about 10 s on two
// cores.
const DefaultSettleWait = 60 * time.Second

// settlingTools holds tool calls and resource reads until the store has
// settled (see Options.Settled).
func (s *Server) settlingTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.settled == nil || method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		wait := time.NewTimer(cmp.Or(s.settleWait, DefaultSettleWait))
		defer wait.Stop()
		select {
		case <-s.settled:
			return next(ctx, method, req)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait.C:
		}
		why := s.settling()
		if method == "tools/call" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
				Text: "papersearch is not ready yet: " + why + "; ask again in a few seconds"}}}, nil
		}
		return nil, fmt.Errorf("papersearch is not ready yet: %s; ask again in a few seconds", why)
	}
}

// shortened cuts each result's abstract (see cut).
func shortened(resp wire.SearchResponse, maxChars int) wire.SearchResponse {
	for i := range resp.Results {
		resp.Results[i].Paper.Abstract = cut(resp.Results[i].Paper.Abstract, maxChars)
	}
	return resp
}

// cut returns s shortened to n characters (DefaultMaxChars when n is not
// positive) as papersearch.Shorten cuts text.
func cut(s string, n int) string {
	if n <= 0 {
		n = DefaultMaxChars
	}
	return papersearch.Shorten(s, n)
}
