package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

func loadAssembly(t *testing.T, dir string) *assembly.Assembly {
	t.Helper()
	a, err := assembly.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func assemblyReport(t *testing.T, oldDir, newDir string) DiffReport {
	t.Helper()
	stacks, err := cfndiff.DiffAssemblies(loadAssembly(t, oldDir), loadAssembly(t, newDir), nil, cfndiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return DiffReport{Stacks: stacks}
}

// TestDiffGoldens renders real multi-stack changes in every view: the shop app synthesized by
// aws-cdk-lib before and after a risky PR, and a v1 → v2 migration across two accounts.
func TestDiffGoldens(t *testing.T) {
	t.Parallel()
	cases := map[string][2]string{
		"shop":        {"../cli/demo/before", "../cli/demo/after"},
		"v1-to-v2":    {"../../compat-fixtures/aws-cdk-core@1.204.0/multi-env", "../../compat-fixtures/aws-cdk-lib@2.0.0/multi-env"},
		"stage-v1-v2": {"../../compat-fixtures/aws-cdk-core@1.204.0/stage-nested", "../../compat-fixtures/aws-cdk-lib@2.276.0/stage-nested"},
	}
	for name, dirs := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := assemblyReport(t, dirs[0], dirs[1])
			var text, md, js bytes.Buffer
			if err := DiffText(&text, r, DiffOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := DiffMarkdown(&md, r, DiffOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := DiffJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "testdata/diff/"+name+".txt", text.Bytes())
			golden.Assert(t, "testdata/diff/"+name+".md", md.Bytes())
			golden.Assert(t, "testdata/diff/"+name+".json", js.Bytes())
			assertBalanced(t, md.String())
			if !json.Valid(js.Bytes()) {
				t.Error("invalid JSON")
			}
		})
	}
}

// assertBalanced checks the HTML structure a comment relies on.
func assertBalanced(t *testing.T, md string) {
	t.Helper()
	for _, tag := range []string{"details", "summary", "code", "sub"} {
		open, close := strings.Count(md, "<"+tag+">")+strings.Count(md, "<"+tag+" "), strings.Count(md, "</"+tag+">")
		if open != close {
			t.Errorf("<%s> opened %d times, closed %d times", tag, open, close)
		}
	}
}

const hostile = "x`</details></code><script>alert(1)</script> | @octocat **bold** [link](http://evil) \n# heading"

// TestHostileStringsStayInert puts attacker-controlled text everywhere a template can carry it
// and checks the Markdown keeps its structure, pings nobody and carries no live HTML.
func TestHostileStringsStayInert(t *testing.T) {
	t.Parallel()
	mk := func(value string) *cfn.Object {
		tpl := fmt.Sprintf(`{"Resources": {%q: {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": %q, "Tags": [{"Key": %q, "Value": %q}]}},
		  "Policy": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "p", "Roles": [%q],
		    "PolicyDocument": {"Statement": [{"Effect": "Allow", "Action": %q, "Resource": %q}]}}}},
		  "Outputs": {%q: {"Value": %q}}}`, hostile, value, hostile, value, hostile, hostile, value, "Out", value)
		v, err := cfn.ParseJSON([]byte(tpl))
		if err != nil {
			t.Fatal(err)
		}
		return cfn.AsObject(v)
	}
	r := DiffReport{Stacks: []*cfndiff.StackDiff{cfndiff.DiffTemplates(hostile, mk("a"), mk(hostile), cfndiff.Options{})}}
	var md bytes.Buffer
	if err := DiffMarkdown(&md, r, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	assertBalanced(t, out)
	for _, bad := range []string{"<script", "</details></code>", "@octocat", "](http://evil)", "\n# heading"} {
		if strings.Contains(out, bad) {
			t.Errorf("Markdown contains %q:\n%s", bad, out)
		}
	}
	if strings.Count(out, "<details>") != 1 {
		t.Errorf("structure broken: %d <details>", strings.Count(out, "<details>"))
	}
}

// TestMarkdownBudget renders many changed stacks into a small budget: the result fits, stays
// well-formed, and says that detail was left out and where the full diff is.
func TestMarkdownBudget(t *testing.T) {
	t.Parallel()
	var stacks []*cfndiff.StackDiff
	for i := range 40 {
		var res strings.Builder
		for j := range 30 {
			if j > 0 {
				res.WriteString(",")
			}
			fmt.Fprintf(&res, `"Param%d": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "%s-%d", "Name": "n%d"}}`, j, strings.Repeat("v", 50), i, j)
		}
		newT, err := cfn.ParseJSON([]byte(`{"Resources": {` + res.String() + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		oldT, _ := cfn.ParseJSON([]byte(strings.ReplaceAll(`{"Resources": {`+res.String()+`}}`, `"n`, `"old-n`)))
		stacks = append(stacks, cfndiff.DiffTemplates(fmt.Sprintf("Stack%02d", i), cfn.AsObject(oldT), cfn.AsObject(newT), cfndiff.Options{}))
	}
	r := DiffReport{Stacks: stacks}
	for _, budget := range []int{GitHubCommentLimit, 20000, 4000} {
		var md bytes.Buffer
		if err := DiffMarkdown(&md, r, DiffOptions{Budget: budget, FullDiffHint: "The full diff is in the job summary."}); err != nil {
			t.Fatal(err)
		}
		out := md.String()
		if len(out) > budget {
			t.Errorf("budget %d: %d bytes", budget, len(out))
		}
		assertBalanced(t, out)
		if !strings.Contains(out, "The full diff is in the job summary.") {
			t.Errorf("budget %d: no hint where the full diff is", budget)
		}
		if !strings.Contains(out, "40 stacks change") {
			t.Errorf("budget %d: headline lost", budget)
		}
	}
}

// Long values that share a beginning are shown around their first difference, both sides cut
// the same way, so old and new never look identical.
func TestValuePairShowsTheDifference(t *testing.T) {
	t.Parallel()
	spec := strings.Repeat("phases: install: commands: npm ci; ", 10)
	old, new := spec+"build: npm test", spec+"build: npm run deploy"
	a, b := valuePair(old, true, new, true, 80)
	if a == b || !strings.HasPrefix(a, "…") || !strings.Contains(a, "npm test") || !strings.Contains(b, "npm run deploy") || len(a) > 90 {
		t.Errorf("%q\n%q", a, b)
	}
	// Short values and values differing early are shown from the start.
	if a, b := valuePair("x", true, "y", true, 80); a != `"x"` || b != `"y"` {
		t.Errorf("%q %q", a, b)
	}
	if a, _ := valuePair("a"+spec, true, "b"+spec, true, 80); !strings.HasPrefix(a, `"a`) {
		t.Errorf("%q", a)
	}
	if a, b := valuePair(nil, false, "é"+spec, true, 20); a != "(absent)" || !strings.HasSuffix(b, "…") {
		t.Errorf("%q %q", a, b)
	}
}
