package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"runtime"
	"strings"

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

// decodeSentences reads what encodeSentences wrote. The vectors share one
// allocation; as decoded, their length is within half a percent of 1.
func decodeSentences(rs string, blob []byte, dim int) ([]storage.Sentence, error) {
	if len(blob) != len(rs)*(4+dim) {
		return nil, fmt.Errorf("sentences: %d bytes for %d sentences of %d dimensions", len(blob), len(rs), dim)
	}
	out := make([]storage.Sentence, len(rs))
	all := make([]float32, len(rs)*dim)
	for i := range out {
		rec := blob[i*(4+dim) : (i+1)*(4+dim)]
		scale := math.Float32frombits(binary.LittleEndian.Uint32(rec))
		v := all[i*dim : (i+1)*dim : (i+1)*dim]
		for j, c := range rec[4:] {
			v[j] = scale * float32(int8(c))
		}
		out[i] = storage.Sentence{Role: roles.Role(rs[i] - '0'), Vector: v}
	}
	return out, nil
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
// reads when Sentences splits its ids across the cores.
const sentencesPerReader = 64

// Sentences returns the sentences kept for those of ids that have them.
// Many papers' are read by as many readers as there are cores, each on a
// connection of its own: the file is read, not mapped (see Open), and a
// read's time is mostly SQLite's copying of the rows' pages.
func (s *Store) Sentences(ctx context.Context, ids []string) (map[string][]storage.Sentence, error) {
	readers := max(1, min(runtime.GOMAXPROCS(0), len(ids)/sentencesPerReader))
	found := make([]map[string][]storage.Sentence, readers)
	g, ctx := errgroup.WithContext(ctx)
	for r := range readers {
		part := ids[r*len(ids)/readers : (r+1)*len(ids)/readers]
		found[r] = make(map[string][]storage.Sentence, len(part))
		g.Go(func() error {
			return s.eachIn(ctx, `SELECT id, roles, vectors FROM sentences WHERE id`, part, func(row scanner) error {
				var (
					id, rs string
					blob   sql.RawBytes // decoded before the next row
				)
				if err := row.Scan(&id, &rs, &blob); err != nil {
					return err
				}
				ss, err := decodeSentences(rs, blob, s.model.Dim)
				if err != nil {
					return fmt.Errorf("paper %s: %w", id, err)
				}
				found[r][id] = ss
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("sentences: %w", err)
	}
	out := found[0]
	for _, m := range found[1:] {
		maps.Copy(out, m)
	}
	return out, nil
}
