// Command benchdiff writes the inputs of scripts/benchdiff/run.sh and times cdkbot's in-process
// diff on them, so the side-by-side comparison with @aws-cdk/cloudformation-diff uses the same
// templates on both sides.
//
//	go run ./scripts/benchdiff -out DIR   writes DIR/{pair500,pair10000,small}-{old,new}.json and
//	                                      DIR/scale-N-{old,new} (assemblies of N stacks × 200
//	                                      resources, N in -stacks), then prints in-process
//	                                      timings as JSON
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
	"github.com/cdkbot/cdkbot/internal/testutil/templategen"
)

func main() {
	out := flag.String("out", "", "directory to write the inputs to")
	stacks := flag.String("stacks", "1,10,100,1000", "stack counts of the generated assembly pairs")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: benchdiff -out DIR")
		os.Exit(2)
	}
	must(os.MkdirAll(*out, 0o755))
	timings := map[string]float64{}
	for _, n := range []int{6, 500, 10000} {
		name := fmt.Sprintf("pair%d", n)
		if n == 6 {
			name = "small"
		}
		old, new := templategen.Pair(n)
		must(os.WriteFile(filepath.Join(*out, name+"-old.json"), old, 0o644))
		must(os.WriteFile(filepath.Join(*out, name+"-new.json"), new, 0o644))
		timings[name+"_ms"] = inProcess(old, new)
	}
	for _, f := range strings.Split(*stacks, ",") {
		n, err := strconv.Atoi(f)
		must(err)
		writeAssemblies(filepath.Join(*out, fmt.Sprintf("scale-%d", n)), n, 200)
	}
	enc := json.NewEncoder(os.Stdout)
	must(enc.Encode(timings))
}

// writeAssemblies writes PREFIX-old and PREFIX-new, two assemblies of n stacks of the given
// number of resources each, as a modern app writes them (one template per stack).
func writeAssemblies(prefix string, n, resources int) {
	old, new := templategen.Pair(resources)
	for i, side := range []string{"old", "new"} {
		dir := prefix + "-" + side
		must(os.MkdirAll(dir, 0o755))
		arts := map[string]any{}
		for s := range n {
			t := old
			if i == 1 {
				t = new
			}
			id := fmt.Sprintf("Stack%04d", s)
			must(os.WriteFile(filepath.Join(dir, id+".template.json"), t, 0o644))
			arts[id] = map[string]any{"type": "aws:cloudformation:stack", "environment": "aws://123456789012/us-east-1",
				"properties": map[string]any{"templateFile": id + ".template.json"}}
		}
		m, _ := json.Marshal(map[string]any{"version": "55.0.0", "artifacts": arts})
		must(os.WriteFile(filepath.Join(dir, "manifest.json"), m, 0o644))
	}
}

// inProcess returns the median time of cdkbot's diff of parsed templates, in milliseconds,
// with the resource specification already loaded (as the reference's in-process timing).
func inProcess(oldRaw, newRaw []byte) float64 {
	old, err := cfn.Parse(oldRaw)
	must(err)
	new, err := cfn.Parse(newRaw)
	must(err)
	resourcespec.Default()
	var samples []float64
	for range 21 {
		start := time.Now()
		cfndiff.Diff(old, new, cfndiff.Options{})
		samples = append(samples, float64(time.Since(start).Microseconds())/1000)
	}
	sort.Float64s(samples)
	return samples[len(samples)/2]
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
