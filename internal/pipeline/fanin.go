package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/cdkbot/cdkbot/internal/checkout"
	"github.com/cdkbot/cdkbot/internal/failure"
)

// Bounds of the fan-in's reading: the legs' report files are data written where pull request
// code ran (downloaded artifacts), so their number, depth and size are limited before reading.
const (
	// MaxLegReports is the most report files read: far more legs than a matrix may have (256).
	MaxLegReports = 1024
	// MaxLegReport is the largest report file read (a comment within GitHub's limit and a review as JSON).
	MaxLegReport = 64 << 20
	// maxLegDepth is how deep below the directory report files are looked for (artifact/file).
	maxLegDepth = 3
)

// LegReportName is the name of the report file a review writes (action.SaveReportIn).
const LegReportName = "cdkbot-report.json"

// LegFile is one report file a leg left, read whole.
type LegFile struct {
	Path string // relative to the directory read
	Raw  []byte
}

// ReadLegReports reads every report file below dir (one per downloaded artifact), never
// through a link, each at most MaxLegReport bytes. A file that cannot be read is skipped with
// a note saying why: no leg is credited with it, so its leg counts as missing (fail closed).
//
// A missing directory is no report at all (actions/download-artifact makes none when no leg
// uploaded one): every touched leg is then missing, which blocks.
func ReadLegReports(dir string) (files []LegFile, notes []string, err error) {
	switch st, err := os.Lstat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, []string{fmt.Sprintf("no report came back: %s does not exist", dir)}, nil
	case err != nil:
		return nil, nil, failure.InputErr(err)
	case !st.IsDir():
		return nil, nil, failure.Inputf("%s is not a directory: name the directory the reports were downloaded to", dir)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			notes = append(notes, fmt.Sprintf("%s could not be read: %v", p, err))
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case p == dir:
			return nil
		case d.IsDir() && depth(rel) >= maxLegDepth:
			return filepath.SkipDir
		case d.IsDir() || d.Name() != LegReportName:
			return nil
		case len(files) >= MaxLegReports:
			return fmt.Errorf("more than %d report files below %s: no matrix has that many legs", MaxLegReports, dir)
		}
		raw, err := checkout.ReadFile(dir, filepath.FromSlash(rel), MaxLegReport)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s was not read: %v", rel, err))
			return nil
		}
		files = append(files, LegFile{Path: rel, Raw: raw})
		return nil
	})
	if err != nil {
		return nil, nil, failure.InputErr(fmt.Errorf("read the legs' reports: %w", err))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, notes, nil
}

func depth(rel string) int {
	n := 1
	for _, c := range rel {
		if c == '/' {
			n++
		}
	}
	return n
}
