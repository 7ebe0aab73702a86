package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/semver"
)

func newCompatCommand(streams IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compat",
		Short: "Compatibility checks: schema changes and the semver bump they need, version specs, version resolution",
	}
	cmd.AddCommand(newCompatSchemaCommand(streams), newCompatSpecCommand(streams), newCompatResolveCommand(streams),
		newCompatMatrixCommand(streams), newCompatAssemblyCommand(streams))
	return cmd
}

// compatSchemaOptions are the inputs of `cdkbot compat schema`.
type compatSchemaOptions struct {
	Old, New                 string
	DeclaredOld, DeclaredNew string
	Format                   string
}

func newCompatSchemaCommand(streams IO) *cobra.Command {
	opts := compatSchemaOptions{}
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "schema OLD.json NEW.json",
		Short: "List the changes between two JSON Schemas and the semver bump they require",
		Long: "schema compares two JSON Schemas (draft-07) from a reader's point of view: a reader of NEW must\n" +
			"accept every document a writer of OLD produced. With --declared-old and --declared-new it judges\n" +
			"the declared version change and exits 1 when it is too small (under-bumped, no-bump).",
		Args: exactArgs(2, "two arguments, OLD.json and NEW.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New, opts.Format = args[0], args[1], f.value
			return runCompatSchema(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	cmd.Flags().StringVar(&opts.DeclaredOld, "declared-old", "", "the version the old schema was released as")
	cmd.Flags().StringVar(&opts.DeclaredNew, "declared-new", "", "the version the new schema is released as")
	return cmd
}

func readJSONFile(path string) (any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%s: %v", path, err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &inputError{fmt.Errorf("%s: not valid JSON: %w", path, err)}
	}
	return v, nil
}

func runCompatSchema(streams IO, opts compatSchemaOptions) error {
	if (opts.DeclaredOld == "") != (opts.DeclaredNew == "") {
		return usagef("--declared-old and --declared-new go together")
	}
	old, err := readJSONFile(opts.Old)
	if err != nil {
		return err
	}
	new, err := readJSONFile(opts.New)
	if err != nil {
		return err
	}
	changes, err := compat.CompareSchemas(old, new)
	if err != nil {
		return &inputError{err}
	}
	required := compat.RequiredBump(changes)
	var verdict *compat.Verdict
	if opts.DeclaredOld != "" {
		ov, err := semver.Parse(opts.DeclaredOld)
		if err != nil {
			return usagef("--declared-old: %v", err)
		}
		nv, err := semver.Parse(opts.DeclaredNew)
		if err != nil {
			return usagef("--declared-new: %v", err)
		}
		v, err := compat.Judge(required, ov, nv)
		if err != nil {
			return usagef("%v", err)
		}
		verdict = &v
	}
	if opts.Format == "json" {
		type change struct {
			Path   string `json:"path"`
			Kind   string `json:"kind"`
			Bump   string `json:"bump"`
			Detail string `json:"detail"`
		}
		out := struct {
			Changes      []change        `json:"changes"`
			RequiredBump string          `json:"requiredBump"`
			Verdict      *compat.Verdict `json:"verdict"`
		}{Changes: []change{}, RequiredBump: required.String(), Verdict: verdict}
		for _, c := range changes {
			out.Changes = append(out.Changes, change{c.Path, string(c.Kind), c.Bump.String(), c.Detail})
		}
		if err := writeJSON(streams, out); err != nil {
			return err
		}
	} else {
		ew := &strings.Builder{}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, c := range changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Bump, c.Kind, c.Path, c.Detail)
		}
		_ = tw.Flush()
		fmt.Fprintf(ew, "%d change(s); required bump: %s\n", len(changes), required)
		if verdict != nil {
			fmt.Fprintf(ew, "declared %s → %s: %s\n", opts.DeclaredOld, opts.DeclaredNew, *verdict)
		}
		if _, err := fmt.Fprint(streams.Out, ew.String()); err != nil {
			return err
		}
	}
	if verdict != nil && verdict.Fails() {
		return &verdictError{}
	}
	return nil
}

func newCompatSpecCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "spec SPEC VERSION...",
		Short: "Show which versions satisfy a version spec (>=1.2,<2.0,!=1.5; x; x.y; x.y.z; *)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("%s takes a SPEC and at least one VERSION", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := semver.ParseSpec(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			versions, err := parseVersions(args[1:])
			if err != nil {
				return err
			}
			ok := spec.Satisfying(versions)
			out := struct {
				Spec       string   `json:"spec"`
				Satisfying []string `json:"satisfying"`
				Latest     *string  `json:"latest"`
			}{Spec: args[0], Satisfying: []string{}}
			for _, v := range ok {
				out.Satisfying = append(out.Satisfying, v.String())
			}
			if len(ok) > 0 {
				latest := ok[len(ok)-1].String()
				out.Latest = &latest
			}
			if f.value == "json" {
				return writeJSON(streams, out)
			}
			latest := "none"
			if out.Latest != nil {
				latest = *out.Latest
			}
			_, err = fmt.Fprintf(streams.Out, "spec %q: %d of %d versions satisfy it: %s\nlatest: %s\n", args[0], len(ok), len(versions),
				strings.Join(out.Satisfying, " "), latest)
			return err
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

func newCompatResolveCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "resolve WANTED AVAILABLE...",
		Short: "Pick the best available match for a wanted version: exact, else same minor, else same major",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("%s takes a WANTED version and at least one AVAILABLE version", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			wanted, err := semver.Parse(args[0])
			if err != nil {
				return usagef("WANTED: %v", err)
			}
			available, err := parseVersions(args[1:])
			if err != nil {
				return err
			}
			v, rule := semver.Resolve(wanted, available)
			out := struct {
				Wanted   string      `json:"wanted"`
				Resolved *string     `json:"resolved"`
				Rule     semver.Rule `json:"rule"`
			}{Wanted: args[0], Rule: rule}
			if rule != semver.RuleNone {
				s := v.String()
				out.Resolved = &s
			}
			if f.value == "json" {
				if err := writeJSON(streams, out); err != nil {
					return err
				}
			} else if rule != semver.RuleNone {
				if _, err := fmt.Fprintf(streams.Out, "%s (%s match for %s)\n", v, rule, args[0]); err != nil {
					return err
				}
			}
			if rule == semver.RuleNone {
				if f.value != "json" {
					fmt.Fprintf(streams.Err, "no available version matches %s: none has major version %d\n", args[0], wanted.Major())
				}
				return &verdictError{}
			}
			return nil
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

func parseVersions(args []string) ([]semver.Version, error) {
	out := make([]semver.Version, 0, len(args))
	for _, a := range args {
		v, err := semver.Parse(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, v)
	}
	return out, nil
}

func writeJSON(streams IO, v any) error {
	enc := json.NewEncoder(streams.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newCompatMatrixCommand(streams IO) *cobra.Command {
	f := &format{value: "text", allowed: []string{"text", "json"}}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Print the CLI × framework × bootstrap × app compatibility matrix with the outcome of each combination",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.value == "json" {
				type row struct {
					CLI       string `json:"cli"`
					Framework string `json:"framework"`
					Bootstrap string `json:"bootstrap"`
					App       string `json:"app"`
					Mode      string `json:"mode"`
					Finding   string `json:"finding"`
					Action    string `json:"action,omitempty"`
					Decided   bool   `json:"decidedByCdkbot,omitempty"`
				}
				rows := []row{}
				for _, r := range compat.Matrix {
					rows = append(rows, row{r.CLI.String(), r.Framework.String(), r.Bootstrap.String(), r.App.String(),
						string(r.Outcome), r.Finding, r.Action, r.Decided})
				}
				return writeJSON(streams, rows)
			}
			var b strings.Builder
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CLI\tframework\tbootstrap\tapp\tmode\twhat happens")
			for _, r := range compat.Matrix {
				finding := r.Finding
				if r.Action != "" {
					finding += " → " + r.Action
				}
				if r.Decided {
					finding += " [decided by cdkbot]"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.CLI, r.Framework, r.Bootstrap, r.App, r.Outcome, finding)
			}
			_ = tw.Flush()
			_, err := fmt.Fprint(streams.Out, b.String())
			return err
		},
	}
	cmd.Flags().Var(f, "format", "output format: text or json")
	return cmd
}

// compatAssemblyOptions are the inputs of `cdkbot compat assembly`.
type compatAssemblyOptions struct {
	Base, Head string
	Repo       string
	Format     string
}

func newCompatAssemblyCommand(streams IO) *cobra.Command {
	opts := compatAssemblyOptions{}
	f := &format{value: "text", allowed: []string{"text", "markdown", "json"}}
	cmd := &cobra.Command{
		Use:   "assembly BASE HEAD",
		Short: "Check a change between two assemblies: toolkit, CLI, bootstrap, deployment mode, framework, feature flags",
		Long: "assembly compares the base and head cloud assemblies of a change, with what the repository pins\n" +
			"(--repo: package.json or its lock file for the aws-cdk CLI, cdk.json context for feature flags).\n" +
			"Exit code 1 when a check fails.",
		Args: exactArgs(2, "two arguments, BASE and HEAD assembly directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Head, opts.Format = args[0], args[1], f.value
			return runCompatAssembly(streams, opts)
		},
	}
	cmd.Flags().Var(f, "format", "output format: text, markdown or json")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "the repository of HEAD, for the pinned aws-cdk CLI and cdk.json context")
	return cmd
}

func runCompatAssembly(streams IO, opts compatAssemblyOptions) error {
	base, err := loadAssembly(opts.Base)
	if err != nil {
		return err
	}
	head, err := loadAssembly(opts.Head)
	if err != nil {
		return err
	}
	var facts compat.RepoFacts
	if opts.Repo != "" {
		if facts, err = readRepoFacts(opts.Repo); err != nil {
			return err
		}
	}
	checks := compat.CheckAssemblies(compat.AssemblyInput{Base: base, Head: head, Repo: facts, ToolSchemaMax: assembly.Schema().MaxMajor})
	switch opts.Format {
	case "json":
		err = writeJSON(streams, map[string]any{"status": compat.Worst(checks), "checks": checks})
	case "markdown":
		err = render.CompatMarkdown(streams.Out, checks)
	default:
		err = render.CompatText(streams.Out, checks)
	}
	if err != nil {
		return err
	}
	if compat.Worst(checks) == compat.Fail {
		return &verdictError{}
	}
	return nil
}

// readRepoFacts reads what a repository pins: the aws-cdk CLI from package-lock.json (exact),
// else from package.json (the lowest version its range allows), and cdk.json's context.
func readRepoFacts(dir string) (compat.RepoFacts, error) {
	var facts compat.RepoFacts
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return facts, usagef("--repo %s: not a directory", dir)
	}
	read := func(name string, v any) (bool, error) {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return false, nil
		}
		if err != nil {
			return false, usagef("%s: %v", filepath.Join(dir, name), err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return false, &inputError{fmt.Errorf("%s: not valid JSON: %w", filepath.Join(dir, name), err)}
		}
		return true, nil
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
		Dependencies map[string]struct {
			Version string `json:"version"`
		} `json:"dependencies"`
	}
	if ok, err := read("package-lock.json", &lock); err != nil {
		return facts, err
	} else if ok {
		if p, found := lock.Packages["node_modules/aws-cdk"]; found {
			facts.CLIVersion, facts.CLISource = p.Version, "package-lock.json"
		} else if d, found := lock.Dependencies["aws-cdk"]; found {
			facts.CLIVersion, facts.CLISource = d.Version, "package-lock.json"
		}
		if p, found := lock.Packages["node_modules/aws-cdk-lib"]; found {
			facts.FrameworkVersion = p.Version
		}
	}
	var pkg struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if ok, err := read("package.json", &pkg); err != nil {
		return facts, err
	} else if ok && facts.CLIVersion == "" {
		for _, deps := range []map[string]string{pkg.DevDependencies, pkg.Dependencies} {
			if r, found := deps["aws-cdk"]; found {
				facts.CLIVersion, facts.CLISource = lowestOfRange(r), "package.json"
			}
		}
	}
	var cdkJSON struct {
		Context map[string]any `json:"context"`
	}
	if _, err := read("cdk.json", &cdkJSON); err != nil {
		return facts, err
	}
	facts.Context = cdkJSON.Context
	return facts, nil
}

// lowestOfRange is the smallest version an npm range such as "^2.1020.0" or ">=2.1000.0 <3"
// allows: the version its first comparator names.
func lowestOfRange(r string) string {
	first := strings.Fields(r)
	if len(first) == 0 {
		return ""
	}
	return strings.TrimLeft(first[0], "^~>=v")
}
