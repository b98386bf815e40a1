package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/papersearch/papersearch/catalog"
	"github.com/papersearch/papersearch/internal/atomicfile"
)

// positioned is a network source that can say where it stands and start
// again there (the arXiv API, OpenAlex and OpenReview readers).
type positioned interface {
	catalog.Source
	Position() string
	Seek(pos string) error
}

// checkpointFile is what a resumable import keeps between runs.
type checkpointFile struct {
	Source   string    `json:"source"`
	Target   string    `json:"target"`
	Position string    `json:"position"`
	Updated  time.Time `json:"updated"`
}

// resumable is a network source whose position is written to a file in
// the data folder after each stored batch, so that the same import run
// again starts after what it stored instead of fetching it again. The file
// goes once the source is read to its end.
type resumable struct {
	positioned
	path string
	file checkpointFile
}

// Checkpoint records the source's position, or removes the record once
// the import is done.
func (r *resumable) Checkpoint(_ context.Context, done bool) error {
	if done {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	r.file.Position, r.file.Updated = r.positioned.Position(), time.Now().UTC()
	b, err := json.Marshal(r.file)
	if err != nil {
		return err
	}
	return atomicfile.Write(r.path, b, 0o644)
}

// resume makes src resumable when it is a network source: an import of
// the same source, target, max and tags (cleaned) into the same store,
// interrupted before, continues where its last stored batch ended (unless
// r.Restart). It returns the source and the position resumed at ("" from
// the start).
func (c Config) resume(r Request, tags []string, src catalog.Source) (catalog.Source, string, error) {
	p, ok := src.(positioned)
	if !ok {
		return src, "", nil
	}
	tags = slices.Clone(tags)
	for i, t := range tags {
		tags[i] = strings.ToLower(t)
	}
	slices.Sort(tags)
	key := []string{r.Kind, r.Target, fmt.Sprint(r.Max), strings.Join(tags, ","), c.Store}
	if r.Of != "" {
		key = append(key, r.Of)
	}
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	res := &resumable{positioned: p, path: filepath.Join(c.DataDir, "imports", hex.EncodeToString(sum[:8])+".json"),
		file: checkpointFile{Source: r.Kind, Target: r.Target}}
	if r.Restart {
		return res, "", nil
	}
	b, err := os.ReadFile(res.path)
	if errors.Is(err, fs.ErrNotExist) {
		return res, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the checkpoint of this import: %w", err)
	}
	var saved checkpointFile
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, "", fmt.Errorf("read the checkpoint of this import (%s): %w; a restart ignores it", res.path, err)
	}
	if err := p.Seek(saved.Position); err != nil {
		return nil, "", fmt.Errorf("%w; a restart ignores the checkpoint %s", err, res.path)
	}
	return res, saved.Position, nil
}
