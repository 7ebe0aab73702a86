package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/deployplan"
	"github.com/cdkbot/cdkbot/internal/ghaction"
)

// The same run as a piped log (a line per event), in GitHub Actions (a line per start, each
// stack's events grouped when it finishes, failures annotated) and as the live table.
func TestDeployViewForEachPlace(t *testing.T) {
	plan := &deployplan.Plan{Stacks: []deployplan.Stack{{ID: "Network"}, {ID: "Service"}}}
	play := func(v *deployView) {
		v.Progress(deployplan.Progress{Stack: "Network", Phase: deployplan.Deploying})
		v.Event(deployplan.Event{Stack: "Network", LogicalID: "Vpc", ResourceType: "AWS::EC2::VPC", Status: "CREATE_IN_PROGRESS"})
		v.Event(deployplan.Event{Stack: "Network", LogicalID: "Vpc", ResourceType: "AWS::EC2::VPC", Status: "CREATE_FAILED", Reason: "quota"})
		v.Progress(deployplan.Progress{Stack: "Network", Phase: deployplan.Finished, Outcome: &deployplan.Outcome{Stack: "Network",
			Result: deployplan.Failed, Status: "ROLLBACK_COMPLETE", Duration: 1500 * time.Millisecond, Error: "stack Network: ended ROLLBACK_COMPLETE"}})
		v.Progress(deployplan.Progress{Stack: "Service", Phase: deployplan.Finished, Outcome: &deployplan.Outcome{Stack: "Service",
			Result: deployplan.Skipped, Reason: "depends on Network, which did not deploy"}})
	}

	var plain bytes.Buffer
	play(newDeployView(&plain, plan, nil))
	want := "cdkbot: Network: deploying\n" +
		"cdkbot: Network | CREATE_IN_PROGRESS AWS::EC2::VPC Vpc\n" +
		"cdkbot: Network | CREATE_FAILED AWS::EC2::VPC Vpc: quota\n" +
		"cdkbot: [1/2] Network: failed (1.5s)\n" +
		"cdkbot: [2/2] Service: skipped: depends on Network, which did not deploy\n"
	if plain.String() != want {
		t.Errorf("plain:\n%s\nwant:\n%s", plain.String(), want)
	}

	var actions bytes.Buffer
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push"}
	rt, err := ghaction.New(func(k string) string { return env[k] }, &actions)
	if err != nil {
		t.Fatal(err)
	}
	play(newDeployView(&actions, plan, rt))
	want = "cdkbot: Network: deploying\n" +
		"::group::cdkbot: [1/2] Network: failed (1.5s)\n" +
		"CREATE_IN_PROGRESS AWS::EC2::VPC Vpc\n" +
		"CREATE_FAILED AWS::EC2::VPC Vpc: quota\n" +
		"::endgroup::\n" +
		"::error::cdkbot deploy: stack Network: ended ROLLBACK_COMPLETE\n" +
		"::group::cdkbot: [2/2] Service: skipped: depends on Network, which did not deploy\n" +
		"::endgroup::\n"
	if actions.String() != want {
		t.Errorf("actions:\n%s\nwant:\n%s", actions.String(), want)
	}

	live := &deployView{byID: map[string]*deployRow{}, events: map[string][]string{}, total: 2}
	for _, s := range plan.Stacks {
		r := &deployRow{id: s.ID, state: "waiting"}
		live.rows, live.byID[s.ID] = append(live.rows, r), r
	}
	var out bytes.Buffer
	live.live = newPainter(&out, &sync.Mutex{}, func() []string { return nil }) // frames are read directly below
	play(live)
	live.Stop()
	frame := strings.Join(live.frame(), "\n")
	if frame != "failed     Network    1.5s  ROLLBACK_COMPLETE\nskipped    Service" {
		t.Errorf("live frame:\n%q", frame)
	}
}

// A failure reason from AWS (or a logical id from the template) cannot start a log line of its
// own: in Actions that line would run as a workflow command.
func TestDeployViewNeutralisesHostileValues(t *testing.T) {
	plan := &deployplan.Plan{Stacks: []deployplan.Stack{{ID: "Network"}}}
	var actions bytes.Buffer
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push"}
	rt, err := ghaction.New(func(k string) string { return env[k] }, &actions)
	if err != nil {
		t.Fatal(err)
	}
	v := newDeployView(&actions, plan, rt)
	v.Event(deployplan.Event{Stack: "Network", LogicalID: "Vpc\n::warning::forged", ResourceType: "AWS::EC2::VPC", Status: "CREATE_FAILED",
		Reason: "quota\n::error::forged\x1b[2J"})
	v.Progress(deployplan.Progress{Stack: "Network", Phase: deployplan.Finished, Outcome: &deployplan.Outcome{Stack: "Network", Result: deployplan.Failed}})
	for _, line := range strings.Split(actions.String(), "\n") {
		if strings.HasPrefix(line, "::warning::forged") || strings.HasPrefix(line, "::error::forged") || strings.Contains(line, "\x1b") {
			t.Errorf("hostile value reached the log as %q", line)
		}
	}
	if !strings.Contains(actions.String(), `CREATE_FAILED AWS::EC2::VPC Vpc\x0a::warning::forged: quota\x0a::error::forged\x1b[2J`) {
		t.Errorf("log:\n%s", actions.String())
	}
}
