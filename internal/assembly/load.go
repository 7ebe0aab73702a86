package assembly

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/cdkbot/cdkbot/internal/semver"
)

// maxNesting bounds Stage nesting; real apps nest a few levels, a loop of directories nests forever.
const maxNesting = 32

const synthHint = "Synthesize the app first: `cdk synth`, or run the app with CDK_OUTDIR set to this directory."

// Load reads the cloud assembly at the root of fsys, with its nested assemblies. root is how the
// user named the directory ("cdk.out"); messages name files under it. The returned error is an
// *Error (bad input), a *TooNewError (schema newer than cdkbot reads), or several *Error joined.
func Load(fsys fs.FS, root string) (*Assembly, error) {
	sch, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	l := &loader{fsys: fsys, root: root, schemas: sch, visited: map[string]bool{}}
	return l.load(".", "", 0)
}

type loader struct {
	fsys    fs.FS
	root    string
	schemas *schemas
	visited map[string]bool // assembly directories read: each once, or a loop of artifacts would multiply the work
}

// display turns a root-relative path into the path the user knows.
func (l *loader) display(rel string) string {
	if l.root == "" {
		return rel
	}
	return path.Join(l.root, rel)
}

// collector gathers problems so one run reports all of them, not one per attempt.
type collector struct {
	errs []error
}

func (c *collector) add(err error) {
	if err != nil {
		c.errs = append(c.errs, err)
	}
}

func (c *collector) err() error { return errors.Join(c.errs...) }

func (l *loader) load(dir, stagePath string, depth int) (*Assembly, error) {
	if depth > maxNesting {
		return nil, newError(l.display(dir), "", "",
			"nested assemblies go more than %d levels deep; is there a loop of directories?", maxNesting)
	}
	if l.visited[path.Clean(dir)] {
		return nil, newError(l.display(path.Join(dir, "manifest.json")), "", "",
			"this assembly is reached twice through nested-assembly artifacts (directoryName %q); "+
				"every nested assembly needs a directory of its own", dir)
	}
	l.visited[path.Clean(dir)] = true
	manifestPath := path.Join(dir, "manifest.json")
	file := l.display(manifestPath)
	data, err := readRegular(l.fsys, manifestPath, MaxFileSize)
	if err != nil {
		return nil, l.missingManifest(dir, file, err)
	}
	doc, err := decodeGeneric(file, data)
	if err != nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, newError(file, "/", synthHint, "the manifest is not a JSON object")
	}
	if err := l.checkVersion(dir, file, obj); err != nil {
		return nil, err
	}
	a := &Assembly{Dir: dir, Path: stagePath, ManifestFile: manifestPath, fsys: l.fsys, root: l.root}
	validated, warnings := tolerateUnknownTypes(file, obj)
	a.Warnings = append(a.Warnings, warnings...)
	if issues := l.validateManifest(validated); len(issues) > 0 {
		return nil, &Error{File: file, Issues: capIssues(issues), Hint: fmt.Sprintf(
			"The manifest does not match the cloud assembly schema cdkbot reads (%s). Synthesize the app again; "+
				"if this framework is newer than cdkbot, upgrade cdkbot.", l.schemas.Source)}
	}
	var m manifestJSON
	if err := decodeTyped(file, data, &m); err != nil {
		return nil, err
	}
	a.Version, a.MinimumCLIVersion, a.Missing = m.Version, m.MinimumCLIVersion, m.Missing
	if m.Runtime != nil {
		a.RuntimeLibraries = m.Runtime.Libraries
	}
	if len(m.Missing) > 0 {
		keys := make([]string, 0, len(m.Missing))
		for _, mc := range m.Missing {
			keys = append(keys, mc.Key)
		}
		a.Warnings = append(a.Warnings, Warning{File: file, Pointer: "/missing", Message: fmt.Sprintf(
			"the app could not resolve %d context lookup(s) (%s); the assembly is incomplete and must not be deployed. "+
				"Synthesize with credentials that can do the lookups and commit cdk.context.json.",
			len(keys), strings.Join(keys, ", "))})
	}

	var c collector
	ids := slices.Sorted(maps.Keys(m.Artifacts))
	generic, _ := obj["artifacts"].(map[string]any)
	for _, id := range ids {
		g, _ := generic[id].(map[string]any)
		c.add(l.artifact(a, file, id, m.Artifacts[id], g, depth))
	}
	c.add(l.checkDependencies(file, m.Artifacts))
	if err := c.err(); err != nil {
		return nil, err
	}
	return a, nil
}

func (l *loader) missingManifest(dir, file string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return &Error{File: file, Issues: []Issue{{Message: "cannot read the manifest: " + err.Error()}}, Err: err}
	}
	entries, derr := fs.ReadDir(l.fsys, dir)
	switch {
	case derr != nil:
		return &Error{File: l.display(dir), Issues: []Issue{{Message: "cannot read the directory: " + derr.Error()}},
			Hint: "Name the cloud assembly directory (usually cdk.out).", Err: derr}
	case len(entries) == 0:
		return newError(l.display(dir), "", synthHint, "the directory is empty: there is no cloud assembly here")
	}
	return newError(file, "", "A cloud assembly directory (usually cdk.out) has a manifest.json at its top. "+synthHint,
		"no manifest.json: this directory is not a cloud assembly")
}

// checkVersion is the toolkit gate: a manifest whose schema major is newer than the embedded
// schema's is refused before validation, since newer fields could be misread silently.
func (l *loader) checkVersion(dir, file string, obj map[string]any) error {
	raw, ok := obj["version"].(string)
	if !ok {
		return nil // schema validation reports a missing or non-string version
	}
	v, err := semver.Parse(raw)
	if err != nil {
		return newError(file, "/version", synthHint, "%q is not a semantic version", raw)
	}
	if int(v.Major()) <= l.schemas.MaxMajor {
		return nil
	}
	return &TooNewError{File: file, Assembly: l.display(dir), SchemaVersion: raw, SupportedMax: l.schemas.MaxMajor,
		Framework: l.sniffFramework(dir, obj)}
}

// sniffFramework finds the framework of an assembly that will not be loaded, for the message.
func (l *loader) sniffFramework(dir string, obj map[string]any) Framework {
	probe := &Assembly{Dir: dir, fsys: l.fsys}
	if rt, ok := obj["runtime"].(map[string]any); ok {
		if libs, ok := rt["libraries"].(map[string]any); ok {
			probe.RuntimeLibraries = map[string]string{}
			for k, v := range libs {
				if s, ok := v.(string); ok {
					probe.RuntimeLibraries[k] = s
				}
			}
		}
	}
	arts, _ := obj["artifacts"].(map[string]any)
	for _, art := range arts {
		am, _ := art.(map[string]any)
		props, _ := am["properties"].(map[string]any)
		if f, ok := props["file"].(string); ok && am["type"] == TypeTree {
			if p, err := resolveInside(l.fsys, dir, f); err == nil {
				probe.TreeFile = p
			}
		}
	}
	return probe.Framework()
}

var knownTypes = map[string]bool{TypeStack: true, TypeAssetManifest: true, TypeTree: true,
	TypeNestedAssembly: true, TypeFeatureFlagReport: true, TypeNone: true}

// tolerateUnknownTypes returns the manifest with unknown artifact types replaced by "none" (and
// their properties left out) for validation, and a warning per such artifact: a newer framework
// may add artifact types that an older toolkit can safely ignore, as the CDK CLI does.
func tolerateUnknownTypes(file string, obj map[string]any) (map[string]any, []Warning) {
	arts, ok := obj["artifacts"].(map[string]any)
	if !ok {
		return obj, nil
	}
	var warnings []Warning
	var copied map[string]any
	for _, id := range slices.Sorted(maps.Keys(arts)) {
		art, ok := arts[id].(map[string]any)
		if !ok {
			continue
		}
		typ, ok := art["type"].(string)
		if !ok || knownTypes[typ] {
			continue
		}
		warnings = append(warnings, Warning{File: file, Pointer: pointer([]string{"artifacts", id, "type"}),
			Message: fmt.Sprintf("artifact %q has type %q, which cdkbot does not know; "+
				"it is kept but ignored (a newer cdkbot may support it)", id, typ)})
		if copied == nil {
			copied = make(map[string]any, len(arts))
			for k, v := range arts {
				copied[k] = v
			}
		}
		patched := make(map[string]any, len(art))
		for k, v := range art {
			patched[k] = v
		}
		patched["type"] = TypeNone
		delete(patched, "properties") // their shape is the unknown type's business
		copied[id] = patched
	}
	if copied == nil {
		return obj, warnings
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	out["artifacts"] = copied
	return out, warnings
}

// validateManifest validates the properties of each known artifact against the definition for
// its type (precise messages), then the rest of the manifest.
func (l *loader) validateManifest(obj map[string]any) []Issue {
	var issues []Issue
	covered := map[string]bool{}
	rest := obj // the manifest without the properties validated above: the schema's anyOf over
	// every artifact type would check them again, five shapes each
	if arts, ok := obj["artifacts"].(map[string]any); ok {
		var trimmed map[string]any
		for _, id := range slices.Sorted(maps.Keys(arts)) {
			art, _ := arts[id].(map[string]any)
			typ, _ := art["type"].(string)
			props, has := art["properties"]
			sch := l.schemas.properties[typ]
			if !has || sch == nil {
				continue
			}
			prefix := pointer([]string{"artifacts", id, "properties"})
			covered[prefix] = true
			for _, is := range sch.Validate(props) {
				is.Pointer = strings.TrimSuffix(prefix+is.Pointer, "/")
				issues = append(issues, is)
			}
			if trimmed == nil {
				trimmed = maps.Clone(arts)
			}
			without := maps.Clone(art)
			delete(without, "properties")
			trimmed[id] = without
		}
		if trimmed != nil {
			rest = maps.Clone(obj)
			rest["artifacts"] = trimmed
		}
	}
	for _, is := range l.schemas.manifest.Validate(rest) {
		if !coveredBy(covered, is.Pointer) {
			issues = append(issues, is)
		}
	}
	return issues
}

func coveredBy(prefixes map[string]bool, p string) bool {
	for prefix := range prefixes {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// artifact reads one artifact of the manifest; generic is the same artifact as parsed for validation.
func (l *loader) artifact(a *Assembly, file, id string, art artifactJSON, generic map[string]any, depth int) error {
	ptr := func(tokens ...string) string { return pointer(append([]string{"artifacts", id}, tokens...)) }
	var env Environment
	if art.Environment != "" {
		var err error
		if env, err = ParseEnvironment(art.Environment); err != nil {
			return newError(file, ptr("environment"), synthHint, "%s", err)
		}
	}
	switch art.Type {
	case TypeStack:
		return l.stack(a, file, id, env, art, ptr)
	case TypeAssetManifest:
		var p fileArtifactPropertiesJSON
		if err := decodeTyped(file, art.Properties, &p); err != nil {
			return err
		}
		rel, err := l.inside(a.Dir, file, ptr("properties", "file"), p.File, "asset manifest")
		if err != nil {
			return err
		}
		m, err := l.assetManifest(a, rel)
		if err != nil {
			return err
		}
		m.ArtifactID, m.NestedPath, m.Environment = id, a.Path, env
		m.RequiresBootstrapStackVersion, err = bootstrapVersion(file,
			ptr("properties", "requiresBootstrapStackVersion"), p.RequiresBootstrapStackVersion)
		if err != nil {
			return err
		}
		m.BootstrapStackVersionSSMParameter = p.BootstrapStackVersionSSMParameter
		a.AssetManifests = append(a.AssetManifests, m)
	case TypeTree:
		var p fileArtifactPropertiesJSON
		if err := decodeTyped(file, art.Properties, &p); err != nil {
			return err
		}
		rel, err := l.inside(a.Dir, file, ptr("properties", "file"), p.File, "construct tree")
		if err != nil {
			return err
		}
		a.TreeFile = rel
	case TypeNestedAssembly:
		var p nestedAssemblyPropertiesJSON
		if err := decodeTyped(file, art.Properties, &p); err != nil {
			return err
		}
		rel, err := l.inside(a.Dir, file, ptr("properties", "directoryName"), p.DirectoryName, "nested assembly")
		if err != nil {
			return err
		}
		name := p.DisplayName
		if name == "" {
			name = art.DisplayName
		}
		if name == "" {
			name = id
		}
		nested, err := l.load(rel, path.Join(a.Path, name), depth+1)
		if err != nil {
			return err
		}
		a.Nested = append(a.Nested, nested)
	case TypeFeatureFlagReport:
		props, _ := generic["properties"].(map[string]any)
		r, err := featureFlagReport(file, id, props)
		if err != nil {
			return err
		}
		a.FeatureFlags = append(a.FeatureFlags, r)
	default:
		a.Others = append(a.Others, OtherArtifact{ID: id, Type: art.Type, Properties: art.Properties})
	}
	return nil
}

// inside resolves a path field of the manifest and requires that it exists.
func (l *loader) inside(dir, file, ptr, p, what string) (string, error) {
	rel, err := resolveInside(l.fsys, dir, p)
	if errors.Is(err, errNotExist) {
		return "", newError(file, ptr,
			"The assembly is incomplete: synthesize the app again, and copy the whole directory if it was moved.",
			"the %s %q does not exist", what, p)
	}
	if err != nil {
		return "", newError(file, ptr,
			"Refusing to read outside the assembly. Synthesize the app again; "+
				"paths in the manifest must stay inside cdk.out.",
			"unsafe %s path: %s", what, err)
	}
	return rel, nil
}

// bootstrapVersion range-checks a bootstrap version from a manifest: a whole number the
// bootstrap stack could have (a 30-digit one would wrap to a negative int and pass every check).
func bootstrapVersion(file, pointer string, v float64) (int, error) {
	if v < 0 || v > 1_000_000 || v != float64(int(v)) {
		return 0, &Error{File: file, Issues: []Issue{{Pointer: pointer, Message: fmt.Sprintf(
			"requiresBootstrapStackVersion %v is not a bootstrap version (a whole number from 0 to 1000000)", v)}},
			Hint: "Synthesize the app again; the manifest is damaged or was edited."}
	}
	return int(v), nil
}

func (l *loader) stack(
	a *Assembly, file, id string, env Environment, art artifactJSON, ptr func(...string) string,
) error {
	var p stackPropertiesJSON
	if err := decodeTyped(file, art.Properties, &p); err != nil {
		return err
	}
	need, err := bootstrapVersion(file,
		ptr("properties", "requiresBootstrapStackVersion"), p.RequiresBootstrapStackVersion)
	if err != nil {
		return err
	}
	s := &Stack{
		ID: id, DisplayName: art.DisplayName, StackName: p.StackName, Environment: env, NestedPath: a.Path,
		TemplateFile: p.TemplateFile, Parameters: p.Parameters, Tags: p.Tags, NotificationARNs: p.NotificationARNs,
		TerminationProtection: p.TerminationProtection, StackTemplateAssetObjectURL: p.StackTemplateAssetObjectURL,
		AssumeRoleARN: p.AssumeRoleARN, AssumeRoleExternalID: p.AssumeRoleExternalID,
		AssumeRoleAdditionalOptions:    p.AssumeRoleAdditionalOptions,
		CloudFormationExecutionRoleARN: p.CloudFormationExecutionRoleARN, LookupRole: p.LookupRole,
		RequiresBootstrapStackVersion: need, BootstrapStackVersionSSMParameter: p.BootstrapStackVersionSSMParameter,
		ValidateOnSynth: p.ValidateOnSynth, Dependencies: art.Dependencies, AdditionalDependencies: p.AdditionalDependencies,
		metaInline: art.Metadata, assembly: a,
	}
	if s.DisplayName == "" {
		s.DisplayName = id
	}
	if s.StackName == "" {
		s.StackName = id // how the CLI names stacks of frameworks that did not write stackName
	}
	rel, err := l.inside(a.Dir, file, ptr("properties", "templateFile"), p.TemplateFile, "template file")
	if err != nil {
		return err
	}
	s.TemplatePath = rel
	info, err := fs.Stat(l.fsys, rel)
	if err != nil {
		return newError(file, ptr("properties", "templateFile"), "", "cannot read the template file: %s", err)
	}
	if info.IsDir() {
		return newError(file, ptr("properties", "templateFile"), synthHint,
			"the template file %q is a directory", p.TemplateFile)
	}
	s.TemplateSize = info.Size()

	// Metadata is decoded on first use, but for the legacy asset entries of old frameworks: their
	// source paths are checked now, so a bad one fails the load and names where it is.
	if bytes.Contains(art.Metadata, []byte(MetadataAsset)) {
		md, err := decodeMetadata(file, ptr("metadata"), art.Metadata)
		if err != nil {
			return err
		}
		if err := l.legacyAssetPaths(a, file, ptr("metadata"), md); err != nil {
			return err
		}
	}
	if art.AdditionalMetadataFile != "" {
		if s.metaFile, err = l.inside(a.Dir, file, ptr("additionalMetadataFile"), art.AdditionalMetadataFile,
			"metadata file"); err != nil {
			return err
		}
	}
	a.Stacks = append(a.Stacks, s)
	return nil
}

// MetadataEntries returns the stack's metadata by construct path: the manifest's and its
// additionalMetadataFile's (newer frameworks keep metadata out of manifest.json), decoded and
// merged on first use. The error says what could not be read (a damaged file, or a legacy
// asset whose source leads out of the assembly, which is then left out); what could is returned.
func (s *Stack) MetadataEntries() (map[string][]MetadataEntry, error) {
	if s.Metadata != nil || s.assembly == nil {
		return s.Metadata, nil
	}
	s.metaOnce.Do(func() {
		a := s.assembly
		l := &loader{fsys: a.fsys, root: a.root}
		md := map[string][]MetadataEntry{}
		var c collector
		add := func(file, base string, raw []byte) {
			got, err := decodeMetadata(file, base, raw)
			if err == nil {
				err = l.legacyAssetPaths(a, file, base, got) // and drops the unsafe entries
			}
			c.add(err)
			for k, v := range got {
				md[k] = append(md[k], v...)
			}
		}
		if len(s.metaInline) > 0 {
			add(l.display(a.ManifestFile), pointer([]string{"artifacts", s.ID, "metadata"}), s.metaInline)
		}
		if s.metaFile != "" {
			raw, err := readRegular(a.fsys, s.metaFile, MaxFileSize)
			if err != nil {
				c.add(&Error{File: l.display(s.metaFile), Issues: []Issue{{Message: "cannot read: " + err.Error()}}, Err: err})
			} else {
				add(l.display(s.metaFile), "", raw)
			}
		}
		s.meta, s.metaErr = md, c.err()
	})
	return s.meta, s.metaErr
}

// decodeMetadata decodes metadata (construct path → entries) in one parse that refuses
// repeated keys; base is the JSON pointer of the metadata in file.
func decodeMetadata(file, base string, raw []byte) (map[string][]MetadataEntry, error) {
	v, err := decodeGeneric(file, raw)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, newError(file, base+"/", synthHint, "metadata is not an object of construct paths")
	}
	out := make(map[string][]MetadataEntry, len(obj))
	for cpath, list := range obj {
		entries, ok := list.([]any)
		if !ok {
			return nil, newError(file, base+pointer([]string{cpath}), synthHint, "metadata entries are not a list")
		}
		for i, item := range entries {
			at := base + pointer([]string{cpath, fmt.Sprint(i)})
			m, ok := item.(map[string]any)
			typ, isString := m["type"].(string)
			if !ok || !isString {
				return nil, newError(file, at, synthHint, "a metadata entry is an object with a type")
			}
			e := MetadataEntry{Type: typ}
			if d, ok := m["data"]; ok {
				if e.Data, err = json.Marshal(d); err != nil {
					return nil, newError(file, at+"/data", synthHint, "%s", err)
				}
			}
			if tr, ok := m["trace"].([]any); ok {
				for _, line := range tr {
					if l, ok := line.(string); ok {
						e.Trace = append(e.Trace, l)
					}
				}
			}
			out[cpath] = append(out[cpath], e)
		}
	}
	return out, nil
}

// legacyAssetPaths checks the source paths of aws:cdk:asset metadata entries, and removes from
// md the entries whose path does not resolve inside the assembly (the error says why): nothing
// may read through them.
func (l *loader) legacyAssetPaths(a *Assembly, file, base string, md map[string][]MetadataEntry) error {
	var c collector
	for _, cpath := range slices.Sorted(maps.Keys(md)) {
		entries := md[cpath]
		kept := entries[:0:0]
		for i, e := range entries {
			if e.Type != MetadataAsset {
				kept = append(kept, e)
				continue
			}
			ptr := base + pointer([]string{cpath, fmt.Sprint(i), "data"})
			var la LegacyAsset
			if err := json.Unmarshal(e.Data, &la); err != nil {
				c.add(newError(file, ptr, synthHint, "asset metadata is malformed: %s", err))
				continue
			}
			rel, err := l.inside(a.Dir, file, ptr+"/path", la.Path, "asset source")
			if err == nil {
				err = l.checkAssetTree(file, ptr+"/path", rel)
			}
			if err != nil {
				c.add(err)
				continue
			}
			kept = append(kept, e)
		}
		md[cpath] = kept
	}
	return c.err()
}

func (l *loader) checkAssetTree(file, ptr, rel string) error {
	info, err := fs.Stat(l.fsys, rel)
	if err != nil || !info.IsDir() {
		return nil
	}
	if err := checkTreeLinks(l.fsys, rel); err != nil {
		return newError(file, ptr,
			"Refusing to publish files from outside the assembly. "+
				"Remove the link from the asset, or copy its target into the asset.",
			"unsafe asset directory %s: %s", rel, err)
	}
	return nil
}

func (l *loader) assetManifest(a *Assembly, rel string) (*AssetManifest, error) {
	file := l.display(rel)
	data, err := readRegular(l.fsys, rel, MaxFileSize)
	if err != nil {
		return nil, &Error{File: file, Issues: []Issue{{Message: "cannot read: " + err.Error()}}, Err: err}
	}
	doc, err := decodeGeneric(file, data)
	if err != nil {
		return nil, err
	}
	if issues := l.schemas.assets.Validate(doc); issues != nil {
		return nil, &Error{File: file, Issues: capIssues(issues), Hint: fmt.Sprintf(
			"The asset manifest does not match the asset schema cdkbot reads (%s). Synthesize the app again.", l.schemas.Source)}
	}
	var w assetManifestJSON
	if err := decodeTyped(file, data, &w); err != nil {
		return nil, err
	}
	m := &AssetManifest{File: rel, Version: w.Version}
	var c collector
	for _, id := range slices.Sorted(maps.Keys(w.Files)) {
		f := w.Files[id]
		ptr := pointer([]string{"files", id, "source"})
		switch {
		case f.Source.Path != "":
			f.Source.ResolvedPath, err = l.inside(a.Dir, file, ptr+"/path", f.Source.Path, "asset source")
			if err == nil {
				err = l.checkAssetTree(file, ptr+"/path", f.Source.ResolvedPath)
			}
			c.add(err)
		case len(f.Source.Executable) == 0:
			c.add(newError(file, ptr, synthHint, "the file asset has neither a path nor an executable"))
		}
		m.Files = append(m.Files, FileAsset{ID: id, DisplayName: f.DisplayName, Source: f.Source,
			Destinations: sortedValues(f.Destinations, func(d *FileDestination, k string) { d.ID = k })})
	}
	for _, id := range slices.Sorted(maps.Keys(w.DockerImages)) {
		img := w.DockerImages[id]
		ptr := pointer([]string{"dockerImages", id, "source"})
		switch {
		case img.Source.Directory != "":
			img.Source.ResolvedDirectory, err = l.inside(a.Dir, file, ptr+"/directory",
				img.Source.Directory, "image build directory")
			if err == nil {
				err = l.checkAssetTree(file, ptr+"/directory", img.Source.ResolvedDirectory)
			}
			if err == nil && img.Source.DockerFile != "" {
				_, err = l.inside(img.Source.ResolvedDirectory, file, ptr+"/dockerFile", img.Source.DockerFile, "Dockerfile")
			}
			c.add(err)
		case len(img.Source.Executable) == 0:
			c.add(newError(file, ptr, synthHint, "the image asset has neither a directory nor an executable"))
		}
		m.DockerImages = append(m.DockerImages, DockerImageAsset{ID: id, DisplayName: img.DisplayName, Source: img.Source,
			Destinations: sortedValues(img.Destinations, func(d *DockerImageDestination, k string) { d.ID = k })})
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// featureFlagReport reads a feature flag report from the manifest as parsed for validation
// (which checked its shape): hundreds of flags, decoded again by encoding/json, were a fifth of
// the time it takes to read an assembly. Values are what encoding/json gives (float64 numbers).
func featureFlagReport(file, id string, props map[string]any) (FeatureFlagReport, error) {
	module, _ := props["module"].(string)
	flags, _ := props["flags"].(map[string]any)
	r := FeatureFlagReport{ArtifactID: id, Module: module, Flags: make([]FeatureFlag, 0, len(flags))}
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		f, ok := flags[name].(map[string]any)
		if !ok {
			return FeatureFlagReport{}, newError(file, pointer([]string{"artifacts", id, "properties", "flags", name}),
				synthHint, "a feature flag is an object")
		}
		explanation, _ := f["explanation"].(string)
		r.Flags = append(r.Flags, FeatureFlag{Name: name, UserValue: plainJSON(f["userValue"]),
			RecommendedValue: plainJSON(f["recommendedValue"]), UnconfiguredBehavesLike: plainJSON(f["unconfiguredBehavesLike"]),
			Explanation: explanation})
	}
	return r, nil
}

// plainJSON turns the json.Number of a parsed value into float64, as encoding/json decodes
// numbers into an interface.
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	}
	return v
}

// checkDependencies requires that dependencies name artifacts of the same manifest and that
// they form no cycle: the deploy order is derived from them.
func (l *loader) checkDependencies(file string, arts map[string]artifactJSON) error {
	var c collector
	for _, id := range slices.Sorted(maps.Keys(arts)) {
		for i, dep := range arts[id].Dependencies {
			if _, ok := arts[dep]; !ok {
				c.add(newError(file, pointer([]string{"artifacts", id, "dependencies", fmt.Sprint(i)}),
					"Dependencies name artifacts of the same manifest. Synthesize the app again.",
					"artifact %q depends on %q, which is not in this assembly", id, dep))
			}
		}
	}
	if err := c.err(); err != nil {
		return err
	}
	if cycle := findCycle(arts); cycle != nil {
		return newError(file, pointer([]string{"artifacts", cycle[0], "dependencies"}),
			"No deploy order exists. Break the cycle in the app (often a cross-stack reference in both directions).",
			"dependency cycle: %s", strings.Join(cycle, " → "))
	}
	return nil
}

// findCycle returns one dependency cycle (first node repeated at the end), or nil.
func findCycle(arts map[string]artifactJSON) []string {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(id string) []string {
		state[id] = active
		stack = append(stack, id)
		deps := append([]string(nil), arts[id].Dependencies...)
		sort.Strings(deps)
		for _, d := range deps {
			switch state[d] {
			case active:
				for i, s := range stack {
					if s == d {
						return append(append([]string(nil), stack[i:]...), d)
					}
				}
			case unvisited:
				if _, ok := arts[d]; ok {
					if cyc := visit(d); cyc != nil {
						return cyc
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(arts)) {
		if state[id] == unvisited {
			if cyc := visit(id); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}
