package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghserver"
	"github.com/cdkbot/cdkbot/internal/testutil/ghspec"
	"github.com/cdkbot/cdkbot/internal/testutil/gitcli"
)

// benchEnv is actionEnv for a benchmark: a pull_request event for #42, head h, base b.
func benchEnv(b *testing.B, srv *ghserver.Server, head, base string) {
	var payload map[string]any
	for _, h := range ghspec.Webhooks(b, "pull_request") {
		if h.Action == "synchronize" && json.Unmarshal(h.Payload, &payload) == nil {
			break
		}
	}
	for path, v := range map[string]any{"number": 42, "pull_request.number": 42, "pull_request.head.sha": head,
		"pull_request.base.sha": base, "pull_request.head.repo.full_name": "acme/shop", "pull_request.head.repo.fork": false,
		"pull_request.base.repo.full_name": "acme/shop", "pull_request.merge_commit_sha": nil,
		"repository.full_name": "acme/shop", "repository.name": "shop", "repository.owner.login": "acme"} {
		set(payload, path, v)
	}
	dir := b.TempDir()
	event := filepath.Join(dir, "event.json")
	writeJSONTB(b, event, payload)
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": event,
		"GITHUB_REPOSITORY": "acme/shop", "GITHUB_API_URL": srv.APIURL(), "GITHUB_GRAPHQL_URL": srv.GraphQLURL(),
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_SHA": head, "GITHUB_WORKFLOW": "cdk", "GITHUB_JOB": "review",
		"GITHUB_RUN_ID": "77", "GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"INPUT_GITHUB-TOKEN": actionToken, "INPUT_SYNTH-USER": "none", "INPUT_FAIL-ON": "", "INPUT_APPROVAL": "",
	} {
		b.Setenv(k, v)
	}
}

// BenchmarkFanOutReview times the review of a change that touches N apps, as one machine would
// run it (every leg one after the other, then the fan-in) against the fan-out's critical path
// (the apps job, the slowest leg, the fan-in), each leg a real review through the action's
// review flow and the GitHub test server. Synthesis is the committed assembly copied, plus a
// fixed delay standing in for the app's own run (a real CDK synthesis takes seconds).
//
//	go test ./internal/cli -run '^$' -bench FanOutReview -benchtime 1x
func BenchmarkFanOutReview(b *testing.B) {
	for _, c := range []struct {
		apps  int
		delay string
	}{{4, "0"}, {8, "0"}, {8, "0.5"}} {
		b.Run(fmt.Sprintf("apps=%d/synth+%ss", c.apps, c.delay), func(b *testing.B) {
			repo := b.TempDir()
			gitcli.Run(b, repo, "init", "-q")
			var names []string
			for i := range c.apps {
				names = append(names, fmt.Sprintf("apps/app%02d", i))
				writeApp(b, repo, names[i], "Queue")
			}
			if err := os.WriteFile(filepath.Join(repo, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
				b.Fatal(err)
			}
			gitcli.Run(b, repo, "add", "-A")
			gitcli.Run(b, repo, "commit", "-qm", "apps")
			base := gitcli.Run(b, repo, "rev-parse", "HEAD")
			for _, n := range names {
				writeApp(b, repo, n, "Queue", "DeadLetters")
			}
			gitcli.Run(b, repo, "add", "-A")
			gitcli.Run(b, repo, "commit", "-qm", "every app: a dead-letter queue")
			head := gitcli.Run(b, repo, "rev-parse", "HEAD")
			srv := ghserver.New(b, actionToken)
			benchEnv(b, srv, head, base)
			b.Setenv("INPUT_SYNTH-COMMAND", `sleep `+c.delay+` && cp -R cdk.out/. "$CDK_OUTDIR"`)
			var seq, crit time.Duration
			for b.Loop() {
				b.Setenv("XDG_CACHE_HOME", b.TempDir()) // every iteration synthesizes afresh
				start := time.Now()
				m, plan := fanOut(b, repo, base, head)
				fanOutTime := time.Since(start)
				if m.Count != c.apps {
					b.Fatalf("%d legs, want %d", m.Count, c.apps)
				}
				reports := b.TempDir()
				var sum, slowest time.Duration
				for _, l := range m.Matrix.Include {
					t0 := time.Now()
					runLeg(b, repo, l.Dir, l.Key, l.Artifact, reports)
					d := time.Since(t0)
					sum += d
					slowest = max(slowest, d)
				}
				b.Setenv("INPUT_CHECK-NAME", "")
				b.Setenv("INPUT_COMMENT", "")
				t0 := time.Now()
				if code, stdout, stderr := runTB("fan-in", "--plan", plan, "--reports", reports, "--post"); code != ExitOK {
					b.Fatalf("fan-in: exit %d\n%s\n%s", code, stdout, stderr)
				}
				fanIn := time.Since(t0)
				seq += sum + fanIn
				crit += fanOutTime + slowest + fanIn
				fmt.Printf("%d apps, synthesis +%ss: one machine %v (legs %v + fan-in %v); "+
					"critical path %v (apps %v + slowest leg %v + fan-in %v): %.1f× faster\n",
					c.apps, c.delay, (sum + fanIn).Round(time.Millisecond), sum.Round(time.Millisecond),
					fanIn.Round(time.Millisecond), (fanOutTime + slowest + fanIn).Round(time.Millisecond),
					fanOutTime.Round(time.Millisecond), slowest.Round(time.Millisecond), fanIn.Round(time.Millisecond),
					float64(sum+fanIn)/float64(fanOutTime+slowest+fanIn))
			}
			b.ReportMetric(float64(seq.Milliseconds())/float64(b.N), "sequential-ms/op")
			b.ReportMetric(float64(crit.Milliseconds())/float64(b.N), "critical-path-ms/op")
		})
	}
}
