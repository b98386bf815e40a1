package api

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// tokenDecoder turns OpenAI token arrays back into text: the input form
// OpenAI's clients send when they count tokens themselves (langchain's
// OpenAIEmbeddings does by default, with tiktoken's cl100k_base, the
// encoding of OpenAI's embedding models and the one tiktoken falls back to
// for a model it does not know). The vocabulary is tiktoken's own file as
// it ships inside the module of tiktoken-go's offline loader; nothing is
// fetched.
type tokenDecoder struct {
	tokens [][]byte // by id; nil for an id that names no token
}

// cl100kURL names the encoding's file as tiktoken does; the offline loader
// reads the file of that name from the module.
const cl100kURL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

// cl100kSpecial are cl100k_base's special tokens, which tiktoken's files
// leave out (tiktoken's openai_public.py lists them).
var cl100kSpecial = map[int]string{100257: "<|endoftext|>", 100258: "<|fim_prefix|>", 100259: "<|fim_middle|>",
	100260: "<|fim_suffix|>", 100276: "<|endofprompt|>"}

func newTokenDecoder() (*tokenDecoder, error) {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(cl100kURL)
	if err != nil {
		return nil, fmt.Errorf("load cl100k_base: %w", err)
	}
	d := &tokenDecoder{tokens: make([][]byte, 100277)}
	for tok, id := range ranks {
		if id < 0 || id >= len(d.tokens) {
			return nil, fmt.Errorf("cl100k_base: token id %d out of range", id)
		}
		d.tokens[id] = []byte(tok)
	}
	for id, tok := range cl100kSpecial {
		d.tokens[id] = []byte(tok)
	}
	return d, nil
}

// decode returns the text of token ids, or the place of the first id
// that names no token of the encoding. Bytes that are not UTF-8 (an array
// cut inside a character) become U+FFFD, as tiktoken's decode does.
func (d *tokenDecoder) decode(ids []int) (string, int) {
	var b []byte
	for i, id := range ids {
		if id < 0 || id >= len(d.tokens) || d.tokens[id] == nil {
			return "", i
		}
		b = append(b, d.tokens[id]...)
	}
	return strings.ToValidUTF8(string(b), string(utf8.RuneError)), -1
}
