package synth

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Options.Context reaches the app on top of cdk.json's context and wins over it, as the CDK
// CLI's -c does: one environment of an app.
func TestSynthPassesEnvironmentContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cdk.json"),
		[]byte(`{"app": "printf '%s' \"$CDK_CONTEXT_JSON\" > \"$CDK_OUTDIR/ctx.json\" && echo {} > \"$CDK_OUTDIR/manifest.json\"", "context": {"stage": "dev", "team": "shop"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cdk.out")
	if err := Run(context.Background(), Options{Dir: dir, OutDir: out, Env: os.Environ(), InstallCommand: "none",
		Context: map[string]string{"stage": "prod"}}); err != nil {
		t.Fatal(err)
	}
	var ctx map[string]any
	b, _ := os.ReadFile(filepath.Join(out, "ctx.json"))
	if err := json.Unmarshal(b, &ctx); err != nil || ctx["stage"] != "prod" || ctx["team"] != "shop" {
		t.Errorf("context %v (%v)", ctx, err)
	}
}
