package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/papersearch/papersearch"
	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/search"
	"github.com/papersearch/papersearch/search/storage"
)

// mcpSearch answers the MCP tool search.
func (s *Server) mcpSearch(ctx context.Context, req *mcp.CallToolRequest, in MCPSearch) (*mcp.CallToolResult, wire.SearchResponse, error) {
	if err := checkMaxChars(in.MaxChars); err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	res, err := s.runSearch(ctx, in.SearchRequest)
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	out := shortened(NewSearchResponse(res), in.MaxChars)
	return emptyStoreResult(out.Index, out), out, nil
}

// emptyStoreHint is what a search tool says beside its empty results
// when the store holds no papers, so that an assistant tells its user
// how to fill it rather than that nothing matched.
const emptyStoreHint = "The store holds no papers yet, so nothing can match. Add papers with the import tool " +
	"(for example source \"arxiv\" with a query as target, or a BibTeX file as content), follow it with import_status, then ask again."

// emptyStoreResult returns, for a search tool's output out over an
// index holding no papers, a result whose content is emptyStoreHint and
// then out as JSON (what the SDK writes as content by itself otherwise);
// nil when the index holds papers.
func emptyStoreResult(index papersearch.IndexInfo, out any) *mcp.CallToolResult {
	if index.Papers > 0 {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: emptyStoreHint}, &mcp.TextContent{Text: string(b)}}}
}

// mcpSimilar answers the MCP tool similar.
func (s *Server) mcpSimilar(ctx context.Context, req *mcp.CallToolRequest, in MCPSimilar) (*mcp.CallToolResult, wire.SearchResponse, error) {
	id, err := mcpID(in.ID)
	if err == nil {
		err = checkMaxChars(in.MaxChars)
	}
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	limit, err := search.RequestedLimit(in.Limit)
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	sq := search.SimilarQuery{ID: id, Aspect: search.Aspect(in.Aspect), Sentences: in.Sentences,
		Mode: search.Mode(in.Mode), Limit: limit, Explain: in.Explain, Cursor: in.Cursor}
	if in.Filters != nil {
		sq.Filter = *in.Filters
	}
	res, err := s.engine.Similar(ctx, sq)
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	return nil, shortened(NewSearchResponse(res), in.MaxChars), nil
}

// mcpRelated answers the MCP tool related_for_text.
func (s *Server) mcpRelated(ctx context.Context, req *mcp.CallToolRequest, in MCPRelated) (*mcp.CallToolResult, RelatedResponse, error) {
	if err := checkMaxChars(in.MaxChars); err != nil {
		return nil, RelatedResponse{}, s.toolError(req, err)
	}
	out, err := related(ctx, s.engine, in)
	if err != nil {
		return nil, RelatedResponse{}, s.toolError(req, err)
	}
	return emptyStoreResult(out.Index, out), out, nil
}

// mcpCollections answers the MCP tool list_collections.
func (s *Server) mcpCollections(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, wire.CollectionsResponse, error) {
	out, err := collections(ctx, s.engine)
	if err != nil {
		return nil, wire.CollectionsResponse{}, s.toolError(req, err)
	}
	return nil, out, nil
}

// mcpRecommend answers the MCP tool recommend.
func (s *Server) mcpRecommend(ctx context.Context, req *mcp.CallToolRequest, in MCPRecommend) (*mcp.CallToolResult, wire.SearchResponse, error) {
	limit, err := search.RequestedLimit(in.Limit)
	if err == nil {
		err = checkMaxChars(in.MaxChars)
	}
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	rq := search.RecommendQuery{Tag: in.Tag, Method: search.RecommendMethod(in.Method), Limit: limit, Cursor: in.Cursor}
	if in.Filters != nil {
		rq.Filter = *in.Filters
	}
	res, err := s.engine.Recommend(ctx, rq)
	if err != nil {
		return nil, wire.SearchResponse{}, s.toolError(req, err)
	}
	return nil, shortened(NewSearchResponse(res), in.MaxChars), nil
}

// mcpGetPaper answers the MCP tool get_paper.
func (s *Server) mcpGetPaper(ctx context.Context, req *mcp.CallToolRequest, in MCPPaper) (*mcp.CallToolResult, papersearch.Paper, error) {
	id, err := mcpID(in.ID)
	if err != nil {
		return nil, papersearch.Paper{}, s.toolError(req, err)
	}
	p, err := getPaper(ctx, s.engine, id)
	if err != nil {
		return nil, papersearch.Paper{}, s.toolError(req, err)
	}
	return nil, p, nil
}

// mcpImport answers the MCP tool import.
func (s *Server) mcpImport(ctx context.Context, req *mcp.CallToolRequest, in wire.ImportRequest) (*mcp.CallToolResult, wire.ImportJob, error) {
	if p := s.authorize(ctx, requestHeader(req)); p != nil {
		return nil, wire.ImportJob{}, s.toolError(req, p)
	}
	job, err := s.beginImport(in)
	if err != nil {
		return nil, wire.ImportJob{}, s.toolError(req, err)
	}
	return nil, *job, nil
}

// mcpImportStatus answers the MCP tool import_status.
func (s *Server) mcpImportStatus(ctx context.Context, req *mcp.CallToolRequest, in MCPImport) (*mcp.CallToolResult, wire.ImportJob, error) {
	if p := s.authorize(ctx, requestHeader(req)); p != nil {
		return nil, wire.ImportJob{}, s.toolError(req, p)
	}
	job, err := s.importJob(in.ID)
	if err != nil {
		return nil, wire.ImportJob{}, s.toolError(req, err)
	}
	return nil, *job, nil
}

// collectionURIPrefix is a collection's resource URI before its tag.
const collectionURIPrefix = "papersearch://collections/"

// mcpCollectionResource reads the resource papersearch://collections/{tag}:
// the collection's papers, as search within its tag finds them.
func (s *Server) mcpCollectionResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	tag, ok := strings.CutPrefix(req.Params.URI, collectionURIPrefix)
	if !ok || !papersearch.ValidCollectionTag(tag) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	papers, err := s.engine.CollectionPapers(ctx, tag)
	if err != nil {
		s.log.Error("MCP resource read failed", "uri", req.Params.URI, "error", err)
		return nil, fmt.Errorf("read %s: %s", req.Params.URI, toProblem(err).Detail)
	}
	if len(papers) == 0 {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	type entry struct {
		ID    string `json:"id"`
		Title string `json:"title"`
		Year  int    `json:"year,omitempty"`
		URI   string `json:"uri"`
	}
	out := struct {
		Tag    string  `json:"tag"`
		Papers []entry `json:"papers"`
	}{Tag: strings.ToLower(tag)}
	for _, p := range papers {
		out.Papers = append(out.Papers, entry{ID: p.ID, Title: p.Title, Year: p.Year, URI: paperURIPrefix + url.PathEscape(p.ID)})
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}}, nil
}

// mcpPaperResource reads the resource papersearch://papers/{id}.
func (s *Server) mcpPaperResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id, ok := strings.CutPrefix(req.Params.URI, paperURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	if unescaped, err := url.PathUnescape(id); err == nil {
		id = unescaped
	}
	id, err := mcpID(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	p, err := getPaper(ctx, s.engine, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	if err != nil {
		s.log.Error("MCP resource read failed", "uri", req.Params.URI, "error", err)
		return nil, fmt.Errorf("read %s: %s", req.Params.URI, toProblem(err).Detail)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)},
		{URI: req.Params.URI, MIMEType: MediaBibTeX, Text: BibTeX([]papersearch.Hit{{ID: p.ID, Paper: p}})},
	}}, nil
}

// checkMaxChars checks a tool's max_chars: 0 (or absent) for
// DefaultMaxChars, or a positive length.
func checkMaxChars(n int) error {
	if n < 0 {
		return &papersearch.FieldError{Field: "max_chars", Reason: fmt.Sprintf("must be 0 (or absent: %d) or more, not %d", DefaultMaxChars, n), Err: search.ErrInvalidQuery}
	}
	return nil
}
