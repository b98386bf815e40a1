package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/papersearch/papersearch/embed"
	"github.com/papersearch/papersearch/search/roles"
	"github.com/papersearch/papersearch/search/storage"
	"golang.org/x/sync/errgroup"
)

// encodeSentences writes sentences as their roles (a digit each) and
// their vectors (each a little-endian float32 scale, then dim int8 codes).
func encodeSentences(ss []storage.Sentence, dim int) (string, []byte) {
	var rs strings.Builder
	blob := make([]byte, 0, len(ss)*(4+dim))
	codes := make([]int8, dim)
	for _, s := range ss {
		rs.WriteByte(byte('0' + s.Role))
		scale := embed.Quantize(codes, s.Vector)
		blob = binary.LittleEndian.AppendUint32(blob, math.Float32bits(scale))
		for _, c := range codes {
			blob = append(blob, byte(c))
		}
	}
	return rs.String(), blob
}

// decodeSentences reads what encodeSentences wrote, into out and all
// (their room reused, grown as needed) and returns them: the sentences'
// vectors share all's memory. As decoded, a vector's length is within half
// a percent of 1.
func decodeSentences(rs string, blob []byte, dim int, out []storage.Sentence, all []float32) ([]storage.Sentence, []float32, error) {
	if len(blob) != len(rs)*(4+dim) {
		return out, all, fmt.Errorf("sentences: %d bytes for %d sentences of %d dimensions", len(blob), len(rs), dim)
	}
	out, all = slices.Grow(out[:0], len(rs))[:len(rs)], slices.Grow(all[:0], len(rs)*dim)[:len(rs)*dim]
	for i := range out {
		rec := blob[i*(4+dim) : (i+1)*(4+dim)]
		scale := math.Float32frombits(binary.LittleEndian.Uint32(rec))
		v := all[i*dim : (i+1)*dim : (i+1)*dim]
		embed.Dequantize(v, rec[4:], scale)
		out[i] = storage.Sentence{Role: roles.Role(rs[i] - '0'), Vector: v}
	}
	return out, all, nil
}

// putSentences replaces the sentences kept for a paper.
func (s *Store) putSentences(ctx context.Context, tx *sql.Tx, id string, ss []storage.Sentence) error {
	rs, blob := encodeSentences(ss, s.model.Dim)
	if _, err := tx.ExecContext(ctx, `INSERT INTO sentences (id, roles, vectors) VALUES (?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET roles = excluded.roles, vectors = excluded.vectors`, id, rs, blob); err != nil {
		return fmt.Errorf("sentences of %s: %w", id, err)
	}
	return nil
}

// KeepsSentences reports true: every embedded store keeps them.
func (s *Store) KeepsSentences() bool { return true }

// sentencesPerReader is the fewest papers whose sentences one reader
// reads when VisitSentences splits its ids across the cores.
const sentencesPerReader = 64

// Sentences returns the sentences kept for those of ids that have them.
func (s *Store) Sentences(ctx context.Context, ids []string) (map[string][]storage.Sentence, error) {
	var mu sync.Mutex
	out := make(map[string][]storage.Sentence, len(ids))
	err := s.VisitSentences(ctx, ids, func(id string, ss []storage.Sentence) {
		kept, all := make([]storage.Sentence, len(ss)), make([]float32, 0, len(ss)*s.model.Dim)
		for i, x := range ss {
			all = append(all, x.Vector...)
			kept[i] = storage.Sentence{Role: x.Role, Vector: all[len(all)-len(x.Vector) : len(all) : len(all)]}
		}
		mu.Lock()
		out[id] = kept
		mu.Unlock()
	})
	return out, err
}

// sentenceBuf is where one reader of VisitSentences decodes a paper's
// sentences: the slices' room is reused paper after paper, and request
// after request (Store.decoded).
type sentenceBuf struct {
	ss  []storage.Sentence
	all []float32
}

// VisitSentences calls visit with the sentences of each of ids that has
// them (storage.SentenceVisitor), decoded into memory each reader reuses.
// Many papers' are read by as many readers as there are cores, each on a
// connection of its own: the file is read, not mapped (see Open), and a
// read's time is mostly SQLite's copying of the rows' pages.
func (s *Store) VisitSentences(ctx context.Context, ids []string, visit func(id string, ss []storage.Sentence)) error {
	readers := max(1, min(runtime.GOMAXPROCS(0), len(ids)/sentencesPerReader))
	g, ctx := errgroup.WithContext(ctx)
	for r := range readers {
		part := ids[r*len(ids)/readers : (r+1)*len(ids)/readers]
		g.Go(func() error {
			buf, _ := s.decoded.Get().(*sentenceBuf)
			if buf == nil {
				buf = new(sentenceBuf)
			}
			defer s.decoded.Put(buf)
			return s.eachIn(ctx, `SELECT id, roles, vectors FROM sentences WHERE id`, part, func(row scanner) error {
				var (
					id, rs string
					blob   sql.RawBytes // decoded before the next row
				)
				if err := row.Scan(&id, &rs, &blob); err != nil {
					return err
				}
				var err error
				if buf.ss, buf.all, err = decodeSentences(rs, blob, s.model.Dim, buf.ss, buf.all); err != nil {
					return fmt.Errorf("paper %s: %w", id, err)
				}
				visit(id, buf.ss)
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("sentences: %w", err)
	}
	return nil
}
