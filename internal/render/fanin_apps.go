package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/apps"
	"github.com/cdkbot/cdkbot/internal/commitid"
)

// FanOut is the fan-out of a change as its views show it: the plan and the commits compared.
type FanOut struct {
	apps.Plan
	Base, Head string
}

// matrixLeg is one leg of the GitHub Actions matrix: what its job needs, as plain strings.
type matrixLeg struct {
	App         string `json:"app"`
	Dir         string `json:"dir"`
	Environment string `json:"environment"`
	// Context is "key=value,key=value" (keys in order), "" without context.
	Context string `json:"context"`
	Key     string `json:"key"`
	// Artifact names the leg's report artifact: unique per key, in the characters
	// actions/upload-artifact accepts.
	Artifact string      `json:"artifact"`
	Status   apps.Status `json:"status"`
	Why      string      `json:"why"`
}

// fanOutMatrix is `cdkbot apps --format github-matrix`: the legs to run as a strategy matrix
// (matrix.include), how many (a job with no leg is skipped on count), the unchanged legs, and
// what the fan-in needs to know them all.
type fanOutMatrix struct {
	Key   string `json:"key"`
	Base  string `json:"base"`
	Head  string `json:"head"`
	Count int    `json:"count"`
	Legs  struct {
		Include []matrixLeg `json:"include"`
	} `json:"matrix"`
	Unchanged []matrixLeg `json:"unchanged"`
	// Removed are the legs of apps only the base has: nothing to run, their stacks left deployed.
	Removed []matrixLeg `json:"removed"`
}

var artifactUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// ReportArtifact is the name of the artifact a leg of key uploads its report file as.
func ReportArtifact(app, env, key string) string {
	sum := sha256.Sum256([]byte(key))
	name := strings.Trim(artifactUnsafe().ReplaceAllString(app+"-"+env, "-"), "-")
	return "cdkbot-report-" + truncate(name, 80) + "-" + hex.EncodeToString(sum[:4])
}

func contextString(ctx map[string]string) string {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + ctx[k]
	}
	return strings.Join(parts, ",")
}

func toMatrixLeg(l apps.Leg) matrixLeg {
	return matrixLeg{App: l.App, Dir: l.Dir, Environment: l.Environment, Context: contextString(l.Context),
		Key: l.Key, Artifact: ReportArtifact(l.App, l.Environment, l.Key), Status: l.Status, Why: l.Why}
}

// FanOutMatrix writes the fan-out as one line of JSON for $GITHUB_OUTPUT.
func FanOutMatrix(w io.Writer, f FanOut) error {
	m := fanOutMatrix{Key: f.Key, Base: f.Base, Head: f.Head}
	m.Legs.Include, m.Unchanged, m.Removed = []matrixLeg{}, []matrixLeg{}, []matrixLeg{}
	for _, l := range f.Legs {
		switch l.Status {
		case apps.Unchanged:
			m.Unchanged = append(m.Unchanged, toMatrixLeg(l))
		case apps.Removed:
			m.Removed = append(m.Removed, toMatrixLeg(l))
		default:
			m.Legs.Include = append(m.Legs.Include, toMatrixLeg(l))
		}
	}
	m.Count = len(m.Legs.Include)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// ParseFanOut reads back the plan FanOutMatrix or FanOutJSON wrote (the fan-in's list of legs).
func ParseFanOut(raw []byte) (FanOut, error) {
	var in struct {
		fanOutMatrix
		Legs []apps.Leg `json:"legs"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return FanOut{}, fmt.Errorf("not the output of cdkbot apps: %w", err)
	}
	f := FanOut{Plan: apps.Plan{Key: in.Key, Legs: in.Legs}, Base: in.Base, Head: in.Head}
	if in.Legs == nil {
		for _, l := range slices.Concat(in.fanOutMatrix.Legs.Include, in.Unchanged, in.Removed) {
			ctx := map[string]string{}
			for _, kv := range strings.Split(l.Context, ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					ctx[k] = v
				}
			}
			if len(ctx) == 0 {
				ctx = nil
			}
			f.Legs = append(f.Legs, apps.Leg{App: l.App, Dir: l.Dir, Environment: l.Environment, Context: ctx,
				Key: l.Key, Status: l.Status, Why: l.Why})
		}
	}
	if f.Key == "" {
		return FanOut{}, fmt.Errorf("not the output of cdkbot apps: no key")
	}
	for _, l := range f.Legs {
		if !strings.HasPrefix(l.Key, f.Key+"/") {
			return FanOut{}, fmt.Errorf("the leg %q is not of the plan's key %q", l.Key, f.Key)
		}
	}
	return f, nil
}

// FanOutJSON writes the fan-out with every leg, unchanged ones included, and why.
func FanOutJSON(w io.Writer, f FanOut) error {
	out := struct {
		Key  string     `json:"key"`
		Base string     `json:"base"`
		Head string     `json:"head"`
		Legs []apps.Leg `json:"legs"`
	}{f.Key, f.Base, f.Head, f.Legs}
	if out.Legs == nil {
		out.Legs = []apps.Leg{}
	}
	// Through the JSON views' one escaping: app names and environments come from the repository
	// (its directories, .cdkbot.yml), and a job prints this JSON to its log.
	return encodeJSON(w, out, "  ", true)
}

// FanOutText writes the fan-out for a terminal: a line per leg, touched first.
func FanOutText(w io.Writer, f FanOut) error {
	var b strings.Builder
	reviewed, removed := len(f.Reviewed()), 0
	for _, l := range f.Legs {
		if l.Status == apps.Removed {
			removed++
		}
	}
	gone := ""
	if removed > 0 {
		gone = fmt.Sprintf(", %d removed", removed)
	}
	fmt.Fprintf(&b, "%s to review, %d unchanged%s (%s → %s)\n", plural(reviewed, "leg", "legs"),
		len(f.Legs)-reviewed-removed, gone, commitid.Short(f.Base, commitid.Unambiguous),
		commitid.Short(f.Head, commitid.Unambiguous))
	for _, l := range f.Legs {
		name := l.App
		if l.Environment != "" {
			name += " · " + l.Environment
		}
		fmt.Fprintf(&b, "%s %s: %s\n", l.Status.Symbol(), Clean(name), Clean(l.Why))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
