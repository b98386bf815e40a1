package api

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// tokenDecoder turns OpenAI token arrays back into text: the input form
// OpenAI's clients send when they count tokens themselves (langchain's
// OpenAIEmbeddings does by default, with tiktoken's cl100k_base, the
// encoding of OpenAI's embedding models and the one tiktoken falls back to
// for a model it does not know). The vocabulary ships inside the module
// (tiktoken-go-loader); nothing is fetched.
type tokenDecoder struct {
	enc  *tiktoken.Tiktoken
	size int // ids are 0 to size-1
}

// cl100kURL names the encoding's file as tiktoken does; the offline loader
// reads the file of that name from the module.
const cl100kURL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

func newTokenDecoder() (*tokenDecoder, error) {
	ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(cl100kURL)
	if err != nil {
		return nil, fmt.Errorf("load cl100k_base: %w", err)
	}
	special := map[string]int{tiktoken.ENDOFTEXT: 100257, tiktoken.FIM_PREFIX: 100258, tiktoken.FIM_MIDDLE: 100259,
		tiktoken.FIM_SUFFIX: 100260, tiktoken.ENDOFPROMPT: 100276}
	const pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	bpe, err := tiktoken.NewCoreBPE(ranks, special, pattern)
	if err != nil {
		return nil, fmt.Errorf("cl100k_base: %w", err)
	}
	set := map[string]any{}
	for k := range special {
		set[k] = true
	}
	enc := tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: tiktoken.MODEL_CL100K_BASE, PatStr: pattern,
		MergeableRanks: ranks, SpecialTokens: special}, set)
	return &tokenDecoder{enc: enc, size: 100277}, nil
}

// decode returns the text of token ids, or the place of the first id
// that is no token of the encoding. Bytes that are not UTF-8 (an array
// cut inside a character) become U+FFFD, as tiktoken's decode does.
func (d *tokenDecoder) decode(ids []int) (string, int) {
	for i, id := range ids {
		if id < 0 || id >= d.size {
			return "", i
		}
	}
	return strings.ToValidUTF8(d.enc.Decode(ids), string(utf8.RuneError)), -1
}
