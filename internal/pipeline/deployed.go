package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/commitid"
	"github.com/cdkbot/cdkbot/internal/deployed"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/review"
	"github.com/cdkbot/cdkbot/internal/stackstate"
)

// Modes of --deployed (the action's input deployed).
const (
	DeployedAuto     = "auto"     // read what runs when AWS credentials are configured
	DeployedOff      = "off"      // never ask AWS
	DeployedRequired = "required" // read it or fail: a review that must not run blind
)

// readDeployed reads what the selected head stacks run, through each stack's lookup role. It
// returns nil (and no error) when the mode is off, or auto without credentials configured.
func readDeployed(
	ctx context.Context, mode string, head *assembly.Assembly,
	keep func(*assembly.Stack) bool, log func(string, ...any),
) (*deployed.Reader, map[string]*stackstate.Stack, error) {
	switch mode {
	case DeployedOff:
		return nil, nil, nil
	case "", DeployedAuto:
		if !credentialsConfigured() {
			return nil, nil, nil
		}
	case DeployedRequired:
	default:
		return nil, nil, failure.Usagef(
			"--deployed %q: use auto (when AWS credentials are configured), off or required", mode)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cfg, err := awsconfig.Load(ctx, awsconfig.Options{MaxAttempts: 3, ResponseTimeout: 30 * time.Second})
	if err == nil && cfg.Region == "" {
		cfg.Region = "us-east-1" // STS and a stack's own region are what count; the chain may name none
	}
	var id awsconfig.Identity
	if err == nil {
		id, err = awsconfig.WhoAmI(ctx, cfg)
	}
	if err != nil {
		if mode == DeployedRequired {
			return nil, nil, failure.OperationErr(fmt.Errorf("--deployed required: %v", err))
		}
		log("cdkbot: not comparing with what is deployed: %s", awsconfig.Explain(err))
		return nil, nil, nil
	}
	var stacks []*assembly.Stack
	for _, s := range head.AllStacks() {
		if keep == nil || keep(s) {
			stacks = append(stacks, s)
		}
	}
	log("cdkbot: reading what %d stack(s) run, as %s", len(stacks), id.ARN)
	r := &deployed.Reader{
		Sessions: awsconfig.NewSessions(cfg, awsconfig.Options{SessionName: "cdkbot-review"}),
		Account:  id.Account, Region: cfg.Region,
	}
	out := r.Read(ctx, stacks)
	var unread []string
	for stackID, st := range out {
		if st.Err != "" {
			unread = append(unread, stackID+": "+st.Err)
		}
	}
	if mode == DeployedRequired && len(unread) > 0 {
		slices.Sort(unread)
		return nil, nil, failure.OperationErr(fmt.Errorf("--deployed required, and what runs could not be read for %s",
			strings.Join(unread, "; ")))
	}
	return r, out, nil
}

// askCloudFormation asks CloudFormation about the deployed stacks the change touches: through
// each stack's deploy role what deploying the head would do (a change set per stack, never
// executed and always deleted), and through its lookup role whether its resources drifted. A
// stack CloudFormation cannot be asked about (the role may not create change sets, a template
// too large to pass inline, detection too slow) keeps the specification's verdicts, with a note
// saying so.
func askCloudFormation(
	ctx context.Context, r *deployed.Reader, rep *review.Report, head *assembly.Assembly,
	running map[string]*stackstate.Stack, headSHA string, log func(string, ...any),
) (map[string]map[string]string, map[string][]stackstate.Drifted, []string) {
	byID := map[string]*assembly.Stack{}
	for _, s := range head.AllStacks() {
		byID[s.QualifiedID()] = s
	}
	var mu sync.Mutex
	verdicts, drifts, notes := map[string]map[string]string{}, map[string][]stackstate.Drifted{}, []string{}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, sd := range rep.Stacks {
		s, d := byID[sd.ID], running[sd.ID]
		if s == nil || d == nil || !d.Deployed || !sd.Changed() {
			continue
		}
		body := rep.Mutated[sd.ID] // the head as it deploys
		if body == nil {
			var err error
			if body, err = s.TemplateBytes(); err != nil {
				continue
			}
		}
		name := "cdkbot-review-" + changeSetSuffix(headSHA, body)
		g.Go(func() error {
			v, err := r.Verdicts(ctx, s, body, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				notes = append(notes, fmt.Sprintf("CloudFormation could not be asked what deploying %s does (%v); "+
					"its replacements are the resource specification's.", sd.ID, err))
				return nil
			}
			verdicts[sd.ID] = v
			return nil
		})
		g.Go(func() error {
			found, err := r.Drift(ctx, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				notes = append(notes, fmt.Sprintf("Drift of %s could not be detected (%v).", sd.ID, err))
				return nil
			}
			if len(found) > 0 { // an entry asks for the review again; a stack without drift adds none
				drifts[sd.ID] = found
			}
			return nil
		})
	}
	_ = g.Wait()
	if len(verdicts) > 0 {
		log("cdkbot: CloudFormation's change sets gave their verdict on %d stack(s)", len(verdicts))
	}
	slices.Sort(notes)
	return verdicts, drifts, notes
}

// changeSetSuffix names a review's change sets after the head commit, or the template.
func changeSetSuffix(headSHA string, body []byte) string {
	if len(headSHA) >= commitid.Unambiguous {
		return commitid.Short(headSHA, commitid.Unambiguous)
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:6])
}

// credentialsConfigured says whether AWS credentials are set up explicitly (environment,
// profile, web identity, container), without asking any endpoint: auto must not wait on the
// instance metadata service of a runner that has none.
func credentialsConfigured() bool {
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	// The SDK reads these files, each where its variable says or else under ~/.aws.
	home, _ := os.UserHomeDir()
	var files []string
	for env, def := range map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "credentials", "AWS_CONFIG_FILE": "config"} {
		if f := os.Getenv(env); f != "" {
			files = append(files, f)
		} else if home != "" {
			files = append(files, filepath.Join(home, ".aws", def))
		}
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}
