package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/compat"
	"github.com/cdkbot/cdkbot/internal/failure"
	"github.com/cdkbot/cdkbot/internal/render"
	"github.com/cdkbot/cdkbot/internal/semver"
)

// CompatSchemaOptions are the inputs of `cdkbot compat schema`.
type CompatSchemaOptions struct {
	Old, New string // JSON Schema files
	// DeclaredOld and DeclaredNew are the versions the schemas are released as; both or neither.
	DeclaredOld, DeclaredNew string
}

// CompatSchema compares two JSON Schema files from a reader's point of view and, when versions
// are declared, judges whether the declared version change is big enough for the changes.
func CompatSchema(o CompatSchemaOptions) (render.SchemaChanges, error) {
	res := render.SchemaChanges{DeclaredOld: o.DeclaredOld, DeclaredNew: o.DeclaredNew}
	if (o.DeclaredOld == "") != (o.DeclaredNew == "") {
		return res, failure.Usagef("--declared-old and --declared-new go together")
	}
	old, err := readJSONFile(o.Old)
	if err != nil {
		return res, err
	}
	new, err := readJSONFile(o.New)
	if err != nil {
		return res, err
	}
	if res.Changes, err = compat.CompareSchemas(old, new); err != nil {
		return res, failure.InputErr(err)
	}
	res.Required = compat.RequiredBump(res.Changes)
	if o.DeclaredOld != "" {
		ov, err := semver.Parse(o.DeclaredOld)
		if err != nil {
			return res, failure.Usagef("--declared-old: %v", err)
		}
		nv, err := semver.Parse(o.DeclaredNew)
		if err != nil {
			return res, failure.Usagef("--declared-new: %v", err)
		}
		v, err := compat.Judge(res.Required, ov, nv)
		if err != nil {
			return res, failure.Usagef("%v", err)
		}
		res.Verdict = &v
	}
	return res, nil
}

// readJSONFile decodes a JSON file into generic values. A file that cannot be read is a
// mistake on the command line; one that is not JSON is input cdkbot cannot accept.
func readJSONFile(path string) (any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, failure.Usagef("%s: %v", path, err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, failure.InputErr(fmt.Errorf("%s: not valid JSON: %w", path, err))
	}
	return v, nil
}

// CompatSpec finds which of some versions a version spec (">=1.2,<2.0,!=1.5", "x", "1.2", "*")
// allows.
func CompatSpec(spec string, versions []string) (render.SpecMatch, error) {
	s, err := semver.ParseSpec(spec)
	if err != nil {
		return render.SpecMatch{}, failure.Usagef("%v", err)
	}
	vs, err := parseVersions(versions)
	if err != nil {
		return render.SpecMatch{}, err
	}
	return render.SpecMatch{Spec: spec, Candidates: vs, Satisfying: s.Satisfying(vs)}, nil
}

// CompatResolve picks the best available match for a wanted version: exact, else the latest
// of the same minor, else of the same major. Finding none is a result, not an error.
func CompatResolve(wanted string, available []string) (render.Resolution, error) {
	w, err := semver.Parse(wanted)
	if err != nil {
		return render.Resolution{}, failure.Usagef("WANTED: %v", err)
	}
	vs, err := parseVersions(available)
	if err != nil {
		return render.Resolution{}, err
	}
	v, rule := semver.Resolve(w, vs)
	return render.Resolution{Wanted: wanted, Want: w, Resolved: v, Rule: rule}, nil
}

func parseVersions(args []string) ([]semver.Version, error) {
	out := make([]semver.Version, 0, len(args))
	for _, a := range args {
		v, err := semver.Parse(a)
		if err != nil {
			return nil, failure.Usagef("%v", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// CompatMatrix is the CLI × framework × bootstrap × app compatibility matrix with the outcome of
// each combination.
func CompatMatrix() []compat.MatrixRow { return slices.Clone(compat.Matrix) }

// CompatAssemblyOptions are the inputs of `cdkbot compat assembly`.
type CompatAssemblyOptions struct {
	Base, Head string // cloud assembly directories
	// Repo is the repository of Head, for the pinned aws-cdk CLI and cdk.json context; "" for none.
	Repo string
}

// CompatAssembly checks a change between two cloud assemblies: toolkit, CLI, bootstrap,
// deployment mode, framework, schema and feature flags.
func CompatAssembly(o CompatAssemblyOptions) (render.CompatChecks, error) {
	base, err := LoadAssembly(o.Base)
	if err != nil {
		return nil, err
	}
	head, err := LoadAssembly(o.Head)
	if err != nil {
		return nil, err
	}
	var facts compat.RepoFacts
	if o.Repo != "" {
		if facts, err = ReadRepoFacts(o.Repo); err != nil {
			return nil, err
		}
	}
	return compat.CheckAssemblies(compat.AssemblyInput{
		Base: base, Head: head, Repo: facts, ToolSchemaMax: assembly.Schema().MaxMajor,
	}), nil
}
