// Package cli wires cdkbot's commands: it parses arguments (cobra), loads inputs through the
// adapters, calls the domain packages, picks a view and maps the outcome to one exit-code table.
// Everything a command does is reachable from Main, so tests drive the real commands in process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/render"
)

// Exit codes: one table for every command (README "Exit codes").
const (
	ExitOK      = 0 // success; no changes
	ExitVerdict = 1 // the command's verdict is negative (diff --fail with changes, a failed gate)
	ExitUsage   = 2 // usage or input error: bad flags, unreadable or invalid input
	ExitTooOld  = 3 // cdkbot is too old for the assembly's schema
	ExitFailure = 4 // an operation failed (AWS, GitHub, git, synth)
)

// version, commit and date are set at build time by the release (goreleaser):
// -ldflags "-X github.com/cdkbot/cdkbot/internal/cli.version=1.2.3 -X ….commit=… -X ….date=…".
var version, commit, date = "", "", ""

// Version returns cdkbot's version: the linker-set one, else the module version (go install
// …@v1.2.3), else "0.0.0-dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.0.0-dev"
}

// Build returns the commit and the date (RFC 3339) cdkbot was built from: the linker-set ones,
// else what the Go toolchain recorded from the checkout (vcs.revision, vcs.time), else "".
func Build() (rev, when string) {
	rev, when = commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.time" && when == "":
				when = s.Value
			}
		}
	}
	return rev, when
}

// IO is the streams a command reads and writes; tests pass buffers.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// debug is on with --verbose or RUNNER_DEBUG=1 (Main sets it; nil writes nothing).
	debug *debugLog
}

// Main runs cdkbot with args (without the program name) and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	dbg := &debugLog{w: stderr, on: os.Getenv("RUNNER_DEBUG") == "1"}
	streams := IO{In: stdin, Out: stdout, Err: stderr, debug: dbg}
	ran := false // set once a command's own code starts: untyped errors before that are cobra's parse errors
	root := newRootCommand(streams)
	var verbose bool
	root.PersistentFlags().BoolVar(&verbose, "verbose", false,
		"debug logs on stderr (also RUNNER_DEBUG=1, which GitHub sets when a run is re-run with debug logging)")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		ran = true
		dbg.on = dbg.on || verbose
		dbg.command(cmd)
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	start := time.Now()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		dbg.Printf("exit 0 after %s", time.Since(start).Round(time.Millisecond))
		return ExitOK
	}
	code := exitCode(err, ran)
	dbg.Printf("exit %d after %s: %T: %v", code, time.Since(start).Round(time.Millisecond), err, err)
	if !failure.Is(err, failure.Verdict) {
		// Errors carry names from the assembly and the app's last lines of output: cleaned.
		fmt.Fprintf(stderr, "cdkbot: %s\n", render.CleanLines(message(err)))
	}
	if failure.Is(err, failure.Usage) || (!ran && code == ExitUsage) {
		help := "cdkbot --help"
		if cmd != nil && cmd != root {
			help = cmd.CommandPath() + " --help"
		}
		fmt.Fprintf(stderr, "Run '%s' for usage.\n", help)
	}
	return code
}

// exitCode maps an error to the exit-code table: the one place an error's kind (package
// failure) becomes an exit code. An error of no kind is a usage error when it came from
// argument parsing and an operation failure otherwise.
func exitCode(err error, ran bool) int {
	switch {
	case failure.Is(err, failure.Verdict):
		return ExitVerdict
	case errors.As(err, new(*assembly.TooNewError)):
		return ExitTooOld
	case errors.As(err, new(*assembly.Error)), failure.Is(err, failure.Usage), failure.Is(err, failure.Input):
		return ExitUsage
	case !ran:
		return ExitUsage
	}
	return ExitFailure
}

func message(err error) string {
	var tooNew *assembly.TooNewError
	if errors.As(err, &tooNew) {
		return tooNew.Message(Version())
	}
	return err.Error()
}

func newRootCommand(streams IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "cdkbot",
		Short: "Review and ship AWS CDK changes: PR diffs, compatibility and policy checks, publish and deploy",
		Long: "cdkbot reads CDK cloud assemblies (cdk.out) from any framework version and explains what a change\n" +
			"will do to your AWS accounts. Exit codes: 0 ok, 1 negative verdict, 2 usage or input error,\n" +
			"3 cdkbot too old for the assembly, 4 an operation failed.",
		Version:       Version(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// --version prints what `cdkbot version` prints.
	root.SetVersionTemplate(versionText())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &failure.Error{Kind: failure.Usage, Err: err} })
	root.AddCommand(newVersionCommand(streams), newPlanCommand(streams), newInspectCommand(streams),
		newDiffCommand(streams), newCompatCommand(streams), newCheckCommand(streams),
		newReviewCommand(streams), newDemoCommand(streams), newHookCommand(streams),
		newActionCommand(streams), newPublishCommand(streams), newDeployCommand(streams))
	root.AddCommand(newAppsCommand(streams), newFanInCommand(streams))
	return root
}

// configCheckout is where the configuration file is read (pipeline.LoadConfig): the default
// .cdkbot.yml as a file of the checkout of the current directory, never through a link out of
// it; a file the user named with --config wherever it leads, their choice.
func configCheckout(named bool) string {
	if named {
		return ""
	}
	return "."
}

// exactArgs is cobra.ExactArgs with a typed usage error and a message that names the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return failure.Usagef("%s takes %s (got %d argument(s))", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// format is a --format flag value checked against the views a command has; with typ, any
// flag whose value is one of a few words (help shows typ as its value's type).
type format struct {
	value   string
	allowed []string
	typ     string
}

func (f *format) String() string { return f.value }
func (f *format) Type() string {
	if f.typ != "" {
		return f.typ
	}
	return "format"
}
func (f *format) Set(v string) error {
	for _, a := range f.allowed {
		if v == a {
			f.value = v
			return nil
		}
	}
	return fmt.Errorf("must be one of %v", f.allowed)
}
