package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/testutil/golden"
)

// TestReplaceNamedGolden renders a review whose only change re-keys the shop's table while it
// keeps its TableName: CloudFormation refuses that replacement, so the review blocks on
// replace-named, says how to go ahead, and lists nothing that reads the table as resolving anew.
func TestReplaceNamedGolden(t *testing.T) {
	t.Parallel()
	src, dst := "../cli/demo/before", t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "ShopData.template.json" {
			b = []byte(strings.ReplaceAll(string(b), `"AttributeName": "pk"`, `"AttributeName": "orderId"`))
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := review.Run(review.Input{Base: loadAssembly(t, src), Head: loadAssembly(t, dst), ToolSchemaMax: 55})
	if err != nil {
		t.Fatal(err)
	}
	var text, md bytes.Buffer
	if err := ReviewText(&text, rep, DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ReviewMarkdown(&md, rep, GitHubCommentLimit); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/review/replace-named.txt", text.Bytes())
	golden.Assert(t, "testdata/review/replace-named.md", md.Bytes())
	assertBalanced(t, md.String())
}
