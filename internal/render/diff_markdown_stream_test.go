package render

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/testutil/templategen"
)

// manyStacksReport is a change of 40 stacks of 30 replaced or updated resources, with unchanged
// stacks among them: more than 50 dangerous changes, so the attention list can be shortened too.
func manyStacksReport(t *testing.T) DiffReport {
	t.Helper()
	parse := func(raw []byte) *cfn.Object {
		v, err := cfn.ParseJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		return cfn.AsObject(v)
	}
	var r DiffReport
	for i := range 48 {
		old, new := templategen.Pair(20 + i%4)
		if i%6 == 5 {
			new = old
		}
		r.Stacks = append(r.Stacks, cfndiff.DiffTemplates(fmt.Sprintf("Stack%02d", i), parse(old), parse(new), cfndiff.Options{}))
	}
	return r
}

// markdownBudgets are budgets from more than the whole view down to less than its head alone,
// steps small enough that every way of fitting the view is taken.
func markdownBudgets(full int) []int {
	budgets := []int{math.MaxInt32, full + 601, full + 600, full + 599, 200, 201, 300, 450, 700, 1000}
	for b := float64(full); b > 200; b *= 0.8 {
		budgets = append(budgets, int(b))
	}
	return budgets
}

// The Markdown view, of the report held whole or written stack by stack through a file, gives the
// bytes it gave before it was weighed on sizes (wholeDiffMarkdown), at every budget: whole, stacks
// degraded to their resources, to one line and left out, the attention list shortened, and cut.
func TestDiffMarkdownStreamGivesTheWholeViewsBytes(t *testing.T) {
	t.Parallel()
	reports := map[string]func(t *testing.T) DiffReport{
		"shop": func(t *testing.T) DiffReport { return assemblyReport(t, "../cli/demo/before", "../cli/demo/after") },
		"v1-to-v2": func(t *testing.T) DiffReport {
			return assemblyReport(t, "../../compat-fixtures/aws-cdk-core@1.204.0/multi-env", "../../compat-fixtures/aws-cdk-lib@2.0.0/multi-env")
		},
		"stage-v1-v2": func(t *testing.T) DiffReport {
			return assemblyReport(t, "../../compat-fixtures/aws-cdk-core@1.204.0/stage-nested", "../../compat-fixtures/aws-cdk-lib@2.276.0/stage-nested")
		},
		"no change": func(t *testing.T) DiffReport {
			return assemblyReport(t, "../../compat-fixtures/aws-cdk-lib@2.276.0/multi-env", "../../compat-fixtures/aws-cdk-lib@2.276.0/multi-env")
		},
		"many stacks": manyStacksReport,
	}
	for name, report := range reports {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := report(t)
			seen := map[string]bool{}
			for _, opts := range []DiffOptions{
				{},
				{FoldAssets: true, FullDiffHint: "The full diff is in the job summary.",
					Notes: map[[2]string]string{{"Stack03", "C0001R00"}: "likely moved"}},
			} {
				full := len(wholeDiffMarkdown(r, DiffOptions{Budget: math.MaxInt32}))
				for _, budget := range markdownBudgets(full) {
					opts.Budget = budget
					want := wholeDiffMarkdown(r, opts)
					var got bytes.Buffer
					if err := DiffMarkdown(&got, r, opts); err != nil {
						t.Fatal(err)
					}
					if got.String() != want {
						t.Fatalf("budget %d: held whole, %s", budget, firstDifference(got.String(), want))
					}
					got.Reset()
					md := streamMarkdownThroughFile(t, &got, r, opts)
					if got.String() != want {
						t.Fatalf("budget %d: through a file, %s", budget, firstDifference(got.String(), want))
					}
					for _, level := range md.layout.levels {
						seen[[]string{"omitted", "summary", "resources", "full"}[level]] = true
					}
					truncated := strings.Contains(want, "… (truncated to fit")
					seen["truncated"] = seen["truncated"] || truncated
					if !truncated && md.layout.attentionN > attentionLimit &&
						!strings.Contains(want, fmt.Sprintf("- … and %d more\n", md.layout.attentionN-attentionLimit)) {
						seen["attention shortened"] = true
					}
				}
			}
			if name != "many stacks" {
				return
			}
			for _, step := range []string{"full", "resources", "summary", "omitted", "attention shortened", "truncated"} {
				if !seen[step] {
					t.Errorf("no budget led to %s", step)
				}
			}
		})
	}
}

// streamMarkdownThroughFile writes r's Markdown view to w through a DiffMarkdownStream spooled to a
// temporary file, and returns the stream.
func streamMarkdownThroughFile(t *testing.T, w *bytes.Buffer, r DiffReport, opts DiffOptions) *DiffMarkdownStream {
	t.Helper()
	spool, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	md := NewDiffMarkdownStream(spool, opts)
	for _, s := range r.Stacks {
		if err := md.Stack(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := md.Close(w); err != nil {
		t.Fatal(err)
	}
	return md
}

// The stream holds no stack once given: nothing it keeps can reach a stack's diff, and the stacks
// given can be wiped before Close without changing a byte.
func TestDiffMarkdownStreamKeepsNoStack(t *testing.T) {
	t.Parallel()
	reached := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		if reached[ty] {
			return
		}
		reached[ty] = true
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			walk(ty.Elem())
		case reflect.Map:
			walk(ty.Key())
			walk(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeFor[DiffMarkdownStream]())
	for ty := range reached {
		switch {
		case ty == reflect.TypeFor[cfndiff.StackDiff](), ty == reflect.TypeFor[cfndiff.TemplateDiff](),
			ty == reflect.TypeFor[cfndiff.ResourceChange]():
			t.Errorf("the stream can hold a %v", ty)
		case ty.Kind() == reflect.Interface && ty != reflect.TypeFor[Spool]() && ty != reflect.TypeFor[error]():
			t.Errorf("the stream can hold anything in a %v", ty)
		}
	}

	for _, budget := range []int{GitHubCommentLimit, 20000, 4000, 500} {
		opts := DiffOptions{Budget: budget}
		want := wholeDiffMarkdown(manyStacksReport(t), opts)
		spool, err := os.CreateTemp(t.TempDir(), "spool")
		if err != nil {
			t.Fatal(err)
		}
		defer spool.Close()
		md := NewDiffMarkdownStream(spool, opts)
		for _, s := range manyStacksReport(t).Stacks {
			if err := md.Stack(s); err != nil {
				t.Fatal(err)
			}
			*s = cfndiff.StackDiff{}
		}
		var got bytes.Buffer
		if err := md.Close(&got); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("budget %d: the stacks wiped after they were given changed the view: %s", budget, firstDifference(got.String(), want))
		}
	}
}

// firstDifference shows where two views part, and their sizes.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("%d bytes, want %d; from byte %d\n%s\nwant\n%s", len(got), len(want), from,
		got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}

// A budget below what the cut note itself takes still writes (the note alone), never panics.
func TestDiffMarkdownTinyBudgets(t *testing.T) {
	t.Parallel()
	r := assemblyReport(t, "../cli/demo/before", "../cli/demo/after")
	for _, budget := range []int{1, 50, 199, 200, 201} {
		var b bytes.Buffer
		if err := DiffMarkdown(&b, r, DiffOptions{Budget: budget}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "truncated to fit") {
			t.Errorf("budget %d: no note that the view was cut:\n%s", budget, b.String())
		}
	}
}
