package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/papersearch/papersearch/api/wire"
	"github.com/papersearch/papersearch/embed"
)

// MaxEmbeddingInputs bounds the texts of one embeddings request, as OpenAI does.
const MaxEmbeddingInputs = 2048

// EmbeddingsRequest is the body of POST /v1/embeddings, as OpenAI defines it.
type EmbeddingsRequest struct {
	// Input is one string or an array of strings.
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model,omitempty"`
	EncodingFormat string          `json:"encoding_format,omitempty"` // "float" (default) or "base64"
	Dimensions     *int            `json:"dimensions,omitempty"`
	User           string          `json:"user,omitempty"`
}

// EmbeddingsResponse is the OpenAI-compatible answer.
type EmbeddingsResponse struct {
	Object string      `json:"object"` // "list"
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  Usage       `json:"usage"`
}

// Embedding is one vector: []float32, or a base64 string of little-endian
// float32 values when encoding_format is "base64".
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// Usage counts the tokens a request cost.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// embeddingsPath is the OpenAI-compatible route.
const embeddingsPath = "/v1/embeddings"

// isOpenAIPath reports whether path is one of the OpenAI-compatible
// routes, whose errors carry OpenAI's error object.
func isOpenAIPath(path string) bool {
	path = strings.TrimSuffix(path, "/")
	return path == embeddingsPath || path == modelsPath || strings.HasPrefix(path, modelsPath+"/")
}

// openAIErrorOf is the OpenAI error object of a problem: its detail as the
// message, a type by status class, the problem type's slug as the code and
// the first invalid field, if any, as the param.
func openAIErrorOf(p *wire.Problem) *wire.OpenAIError {
	e := &wire.OpenAIError{Message: p.Detail, Type: "invalid_request_error",
		Code: strings.ReplaceAll(strings.TrimPrefix(p.Type, wire.ProblemType), "-", "_")}
	if e.Message == "" {
		e.Message = p.Title
	}
	switch {
	case p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden:
		e.Type = "authentication_error"
	case p.Status == http.StatusTooManyRequests:
		e.Type = "rate_limit_error"
	case p.Status >= 500:
		e.Type = "server_error"
	}
	if len(p.Errors) > 0 {
		param := strings.TrimPrefix(p.Errors[0].Pointer, "/")
		if param == "" {
			param = p.Errors[0].Param
		}
		if param != "" {
			e.Param = &param
		}
	}
	return e
}

func embeddingProblem(status int, code, param, detail string) *wire.Problem {
	// The problem type is the code in the style of every problem type
	// (model-not-found); OpenAI's error object keeps OpenAI's (model_not_found).
	p := problem(status, strings.ReplaceAll(code, "_", "-"), detail)
	if status == http.StatusBadRequest {
		p.Title = "Invalid request"
		if param != "" {
			p.Errors = []wire.FieldProblem{{Pointer: "/" + param, Detail: detail}}
		}
	}
	p.OpenAI = openAIErrorOf(p)
	p.OpenAI.Code = code
	if param != "" {
		p.OpenAI.Param = &param
	}
	return p
}

func (s *Server) embeddings(c echo.Context) error {
	var req EmbeddingsRequest
	if err := s.decode(c, BatchBodyFactor*s.maxBody, &req); err != nil {
		return err
	}
	texts, err := parseInput(req.Input, s.tokens)
	if err != nil {
		return err
	}
	if s.embedTokens != nil {
		if err := s.embedTokens.admit(c); err != nil {
			return err
		}
	}
	models := s.engine.Models()
	model := models[0]
	if req.Model != "" {
		m, ok := findModel(models, req.Model)
		if !ok {
			names := make([]string, len(models))
			for j, m := range models {
				names[j] = strconv.Quote(m.Name)
			}
			return embeddingProblem(http.StatusNotFound, "model_not_found", "model",
				fmt.Sprintf("the model %q does not exist here; this server embeds with %s", req.Model, strings.Join(names, " or ")))
		}
		model = m
	}
	if req.Dimensions != nil && *req.Dimensions != model.Dim {
		return embeddingProblem(http.StatusBadRequest, "invalid_dimensions", "dimensions",
			fmt.Sprintf("%s produces %d dimensions; dimensions must be %d or omitted", model.Name, model.Dim, model.Dim))
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64" {
		return embeddingProblem(http.StatusBadRequest, "invalid_encoding_format", "encoding_format",
			fmt.Sprintf("encoding_format must be \"float\" or \"base64\", not %q", req.EncodingFormat))
	}
	ctx, cancel := extendWriteDeadline(c, len(texts))
	defer cancel()
	vecs, tokens, err := s.engine.Embed(ctx, model.Name, texts)
	if err != nil {
		return err
	}
	if s.embedTokens != nil {
		s.embedTokens.charge(c, tokens)
	}
	resp := EmbeddingsResponse{Object: "list", Data: make([]Embedding, len(vecs)), Model: model.Name,
		Usage: Usage{PromptTokens: tokens, TotalTokens: tokens}}
	for i, v := range vecs {
		var e any = v
		if req.EncodingFormat == "base64" {
			e = base64.StdEncoding.EncodeToString(embed.EncodeVector(v))
		}
		resp.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: e}
	}
	return c.JSON(http.StatusOK, resp)
}

// parseInput accepts what OpenAI's API does: a string, an array of 1 to
// MaxEmbeddingInputs non-empty strings, an array of token ids or an array
// of such arrays (cl100k_base ids, see tokenDecoder), which tokens decodes.
func parseInput(raw json.RawMessage, tokens func() (*tokenDecoder, error)) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, embeddingProblem(http.StatusBadRequest, "missing_input", "input", "input is required: a string or an array of strings")
	}
	var (
		texts []string
		one   string
		ids   []int
		idss  [][]int
	)
	form := "input must be a string, an array of strings, an array of token ids or an array of token id arrays"
	switch {
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input", "input is not a valid JSON string")
		}
		texts = []string{one}
	case json.Unmarshal(raw, &texts) == nil:
	case json.Unmarshal(raw, &ids) == nil && len(ids) > 0:
		idss = [][]int{ids}
	case json.Unmarshal(raw, &idss) == nil:
	default:
		return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input", form)
	}
	if idss != nil {
		dec, err := tokens()
		if err != nil {
			return nil, err
		}
		texts = make([]string, len(idss))
		for i, ids := range idss {
			if len(ids) == 0 {
				return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input",
					fmt.Sprintf("input[%d] is an empty token array; every input must hold a token", i))
			}
			text, bad := dec.decode(ids)
			if bad >= 0 {
				return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input",
					fmt.Sprintf("input[%d][%d] is %d, which names no cl100k_base token", i, bad, ids[bad]))
			}
			texts[i] = text
		}
	}
	if len(texts) == 0 || len(texts) > MaxEmbeddingInputs {
		return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input",
			fmt.Sprintf("input must hold 1 to %d inputs, not %d", MaxEmbeddingInputs, len(texts)))
	}
	for i, t := range texts {
		if t == "" {
			return nil, embeddingProblem(http.StatusBadRequest, "invalid_input", "input",
				fmt.Sprintf("input[%d] is empty; every input must be a non-empty string", i))
		}
	}
	return texts, nil
}

// Model is a model as OpenAI's API describes one (GET /v1/models), and
// its dimension.
type Model struct {
	ID         string `json:"id"`
	Object     string `json:"object"` // "model"
	Created    int64  `json:"created"`
	OwnedBy    string `json:"owned_by"`
	Dimensions int    `json:"dimensions"`
}

// ModelList is GET /v1/models's answer.
type ModelList struct {
	Object string  `json:"object"` // "list"
	Data   []Model `json:"data"`
}

// modelsPath is the OpenAI-compatible list of models, which clients ask
// before they embed.
const modelsPath = "/v1/models"

func modelOf(m embed.ModelInfo) Model {
	return Model{ID: m.Name, Object: "model", OwnedBy: "papersearch", Dimensions: m.Dim}
}

// listModels answers GET /v1/models: the models /v1/embeddings takes.
func (s *Server) listModels(c echo.Context) error {
	for name := range c.QueryParams() {
		return invalid("this request takes no parameters", wire.FieldProblem{Param: name, Detail: "is not a parameter of this request"})
	}
	out := ModelList{Object: "list", Data: []Model{}}
	for _, m := range s.engine.Models() {
		out.Data = append(out.Data, modelOf(m))
	}
	return c.JSON(http.StatusOK, out)
}

// getModel answers GET /v1/models/{model} (a model's name may hold
// slashes, as "BAAI/bge-small-en-v1.5" does).
func (s *Server) getModel(c echo.Context) error {
	name := c.Param("*") // decoded, unless the path held escapes Go left (RawPath)
	if c.Request().URL.RawPath != "" {
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
	}
	if m, ok := findModel(s.engine.Models(), name); ok {
		return c.JSON(http.StatusOK, modelOf(m))
	}
	return embeddingProblem(http.StatusNotFound, "model_not_found", "model",
		fmt.Sprintf("the model %q does not exist here; GET %s lists those that do", name, modelsPath))
}

// findModel finds the model a client names among models: by its name, or
// else by its key (embed.ModelKey: "BAAI/bge-small-en-v1.5" for
// bge-small-en-v1.5, in any letter case).
func findModel(models []embed.ModelInfo, name string) (embed.ModelInfo, bool) {
	i := slices.IndexFunc(models, func(m embed.ModelInfo) bool { return m.Name == name })
	if i < 0 {
		i = slices.IndexFunc(models, func(m embed.ModelInfo) bool { return embed.ModelKey(m.Name) == embed.ModelKey(name) })
	}
	if i < 0 {
		return embed.ModelInfo{}, false
	}
	return models[i], true
}
