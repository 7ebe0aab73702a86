// Package config reads .cdkbot.yml, the one file a team writes to tune cdkbot: which aspects run
// over their templates and how, which findings are suppressed, and how merges deploy.
//
// It exists so that the file has one owner. The file's shape is decided here, once: every key,
// its type, the line it is on, the message a mistake earns (file, line and key), the bounds a
// hostile file meets, and the JSON Schema editors complete it with (Schema), which the tests
// hold to the parser. Review, check, plan and deploy all read the file through Parse, so a
// mistake anywhere in it is reported the same way by each.
//
// It checks structure, not meaning: which aspect names exist and what options each takes belong
// to internal/aspects, which reads Aspect.Use and Aspect.With; what the deploy settings do belongs
// to the deploy planner. It is pure: bytes in, values out.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Bounds of a configuration file. yaml itself stops at 10,000 levels and at excessive aliasing;
// a configuration needs far less, so these stop a hostile or broken file early and cheaply.
const (
	// MaxBytes is the largest file read.
	MaxBytes = 1 << 20
	// MaxDepth is the deepest nesting of mappings and sequences, aliases followed.
	MaxDepth = 64
	// MaxNodes bounds the document's nodes with every alias expanded where it is used.
	MaxNodes = 100_000
)

// File is a parsed .cdkbot.yml. The zero value (no file, or an empty one) configures nothing:
// no aspects, stabilization on, default deploy settings.
type File struct {
	// Name is the file name given to Parse; messages about the file start with it.
	Name string
	// Aspects are the aspects to run, in file order (they run in priority order).
	Aspects []Aspect
	// Stabilization, when false, runs aspects in a single pass (the legacy behaviour); nil is true.
	Stabilization *bool
	// Suppress silences rules on constructs; each has a reason, shown in reports.
	Suppress []Suppression
	// Deploy are the deploy settings.
	Deploy Deploy
	// Apps are the repository's CDK apps and their environments (cdkbot apps).
	Apps Apps
	// Synth are the synthesis settings.
	Synth Synth
}

// Stabilizing reports whether aspect passes repeat until the tree stops changing (the default).
func (f *File) Stabilizing() bool { return f.Stabilization == nil || *f.Stabilization }

// Aspect is one entry of the aspects list.
type Aspect struct {
	// Use names a built-in aspect; internal/aspects knows the names.
	Use string
	// With holds the aspect's options as written: their shape depends on the aspect, so
	// internal/aspects decodes and checks them. A zero node means there were none.
	With yaml.Node
	// Priority orders aspects (lower first); nil leaves the aspect's default. Never negative.
	Priority *int
	// Severity of the aspect's findings: "error", "warning", or "" (error).
	Severity string
	// Scope is a construct-path glob the aspect is limited to; "" is the whole app.
	Scope string
	// Line is where the entry starts in the file.
	Line int
}

// Suppression silences a rule on constructs whose path matches a glob ("" matches all).
type Suppression struct {
	Rule   string `yaml:"rule"`
	Path   string `yaml:"path"`
	Reason string `yaml:"reason"`
	// Line is where the entry starts in the file.
	Line int `yaml:"-"`
}

// Deploy is the deploy section: what a team sets once instead of on every command line. Flags
// and action inputs given explicitly win.
type Deploy struct {
	// Waves are globs: matching stacks deploy first, wave by wave (e.g. vpc-*, then service-*).
	Waves []string `yaml:"waves"`
	// Concurrency is the number of stacks deployed at once; 0 leaves the default.
	Concurrency int `yaml:"concurrency"`
	// RequireApproval is never or broadening; "" leaves the default.
	RequireApproval string `yaml:"require-approval"`
}

// Synth is the synth section: what a review's synthesis of the app leaves out.
type Synth struct {
	// Exclude are patterns (cdk.json watch.exclude style: "*.md", "/docs/", "**/*.test.ts") of
	// files of the app's directory its synthesis does not read: they are not checked out and not
	// part of the synthesis cache key, so a commit that only changes them reuses the assembly.
	// nil leaves cdkbot's defaults; an empty list leaves out nothing.
	Exclude []string `yaml:"exclude"`
}

// MaxExcludes bounds synth.exclude.
const MaxExcludes = 200

// The keys of each mapping, in the order messages list them.
var (
	fileKeys        = []string{"aspects", "stabilization", "suppress", "deploy", "apps", "synth"}
	aspectKeys      = []string{"use", "with", "priority", "severity", "scope"}
	suppressionKeys = []string{"rule", "path", "reason"}
	deployKeys      = []string{"waves", "concurrency", "require-approval"}
	synthKeys       = []string{"exclude"}
)

// document and aspectYAML are what yaml decodes into; Parse turns them into a File.
type document struct {
	Aspects       []aspectYAML  `yaml:"aspects"`
	Stabilization *bool         `yaml:"stabilization"`
	Suppress      []Suppression `yaml:"suppress"`
	Deploy        yaml.Node     `yaml:"deploy"`
	Apps          yaml.Node     `yaml:"apps"`
	Synth         yaml.Node     `yaml:"synth"`
}

type aspectYAML struct {
	Use      string    `yaml:"use"`
	With     yaml.Node `yaml:"with"`
	Priority *priority `yaml:"priority"`
	Severity string    `yaml:"severity"`
	Scope    string    `yaml:"scope"`
}

// priority accepts integers only: yaml would otherwise read 1.5 as 1.
type priority int

func (p *priority) UnmarshalYAML(n *yaml.Node) error {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return fmt.Errorf("line %d: priority %q must be a non-negative integer", n.Line, n.Value)
	}
	*p = priority(i)
	return nil
}

// Parse reads a configuration file named file (the name only starts messages). Every key is
// checked: unknown ones are errors that name the file, the line and the keys allowed there.
func Parse(file string, data []byte) (*File, error) {
	f := &File{Name: file}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%s: %d bytes; a configuration is at most %d", file, len(data), MaxBytes)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(file, err)
	}
	if err := checkBounds(file, &root); err != nil {
		return nil, err
	}
	if len(root.Content) == 0 {
		return f, nil // empty, or only comments
	}
	top := resolve(root.Content[0])
	if top.Kind != yaml.MappingNode && top.Tag != "!!null" {
		return nil, fmt.Errorf("%s: line %d: the configuration must be a mapping with %s",
			file, top.Line, strings.Join(fileKeys, ", "))
	}
	var doc document
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err)
	}
	aspectLines, suppressLines := entryLines(top, "aspects"), entryLines(top, "suppress")
	for i, a := range doc.Aspects {
		e := Aspect{Use: a.Use, With: *resolve(&a.With), Severity: a.Severity, Scope: a.Scope}
		if i < len(aspectLines) {
			e.Line = aspectLines[i]
		}
		where := fmt.Sprintf("%s: line %d: aspects[%d]", file, e.Line, i)
		if a.Priority != nil {
			p := int(*a.Priority)
			if p < 0 {
				return nil, fmt.Errorf("%s: priority %d is negative; "+
					"use a non-negative integer (200 mutating, 600 default, 1000 read-only)", where, p)
			}
			e.Priority = &p
		}
		if e.Severity != "" && e.Severity != "error" && e.Severity != "warning" {
			return nil, fmt.Errorf("%s: severity %q is not error or warning", where, e.Severity)
		}
		f.Aspects = append(f.Aspects, e)
	}
	f.Stabilization = doc.Stabilization
	for i, s := range doc.Suppress {
		if i < len(suppressLines) {
			s.Line = suppressLines[i]
		}
		where := fmt.Sprintf("%s: suppress[%d]", file, i)
		switch {
		case s.Rule == "":
			return nil, fmt.Errorf("%s: a suppression needs the rule it silences", where)
		case strings.TrimSpace(s.Reason) == "":
			return nil, fmt.Errorf("%s: suppression of %s on %q has no reason; "+
				"a reason is required and is shown in reports", where, s.Rule, s.Path)
		}
		f.Suppress = append(f.Suppress, s)
	}
	var err error
	if f.Deploy, err = parseDeploy(file, &doc.Deploy); err != nil {
		return nil, err
	}
	if f.Apps, err = parseApps(file, &doc.Apps); err != nil {
		return nil, err
	}
	if f.Synth, err = parseSynth(file, &doc.Synth); err != nil {
		return nil, err
	}
	return f, nil
}

// section is a top-level section of the file as a mapping of known keys (resolved), or nil when
// the file has none (a zero node); errors name the file, the line and the key.
func section(file, name string, n *yaml.Node, keys []string) (*yaml.Node, error) {
	if n == nil || n.Kind == 0 {
		return nil, nil
	}
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: %s must be a mapping with %s", file, n.Line, name, strings.Join(keys, ", "))
	}
	return n, knownKeys(file, name, n, keys)
}

// parseSynth reads the synth section; a zero node means there is none.
func parseSynth(file string, n *yaml.Node) (Synth, error) {
	var s Synth
	n, err := section(file, "synth", n, synthKeys)
	if n == nil || err != nil {
		return s, err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if v := resolve(n.Content[i+1]); v.Kind != yaml.SequenceNode {
			return s, fmt.Errorf("%s: line %d: synth.exclude must be a list of patterns", file, v.Line)
		}
	}
	if err := n.Decode(&s); err != nil {
		return s, fmt.Errorf("%s: synth: %s", file, yamlMessage(err))
	}
	if s.Exclude != nil && len(s.Exclude) == 0 {
		s.Exclude = []string{} // given empty: nothing is excluded (not the defaults)
	}
	if len(s.Exclude) > MaxExcludes {
		return s, fmt.Errorf("%s: synth.exclude has %d patterns; at most %d", file, len(s.Exclude), MaxExcludes)
	}
	for _, p := range s.Exclude {
		if strings.TrimFunc(p, func(r rune) bool { return r == '/' || unicode.IsSpace(r) }) == "" {
			return s, fmt.Errorf("%s: synth.exclude: %q is not a pattern (give one such as *.md or /docs/)", file, p)
		}
	}
	return s, nil
}

// parseDeploy reads a deploy section held as a yaml node, as Parse does for the file's deploy
// key; a zero node means there is none. Errors name the file, the line and the key.
func parseDeploy(file string, n *yaml.Node) (Deploy, error) {
	var d Deploy
	n, err := section(file, "deploy", n, deployKeys)
	if n == nil || err != nil {
		return d, err
	}
	if err := n.Decode(&d); err != nil {
		return d, fmt.Errorf("%s: deploy: %s", file, yamlMessage(err))
	}
	for _, g := range d.Waves {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return d, fmt.Errorf("%s: deploy.waves: %q is not a valid glob", file, g)
		}
	}
	if d.Concurrency < 0 {
		return d, fmt.Errorf("%s: deploy.concurrency is %d: give at least 1", file, d.Concurrency)
	}
	if d.RequireApproval != "" && d.RequireApproval != "never" && d.RequireApproval != "broadening" {
		return d, fmt.Errorf("%s: deploy.require-approval is %q: use never or broadening", file, d.RequireApproval)
	}
	return d, nil
}

// yamlError rewrites yaml's messages ("field colour not found in type config.aspectYAML") into
// ones that name the file and say what is allowed.
func yamlError(file string, err error) error {
	msg := yamlMessage(err)
	if i := strings.Index(msg, "field "); i >= 0 && strings.Contains(msg, " not found in type ") {
		key := strings.Fields(msg[i+len("field "):])[0]
		for typ, keys := range map[string][]string{
			"config.document": fileKeys, "config.aspectYAML": aspectKeys, "config.Suppression": suppressionKeys,
		} {
			if strings.Contains(msg, " "+typ) {
				return fmt.Errorf("%s: %s: unknown key %q (allowed here: %s)",
					file, strings.TrimSuffix(strings.TrimSpace(msg[:i]), ":"), key, strings.Join(keys, ", "))
			}
		}
	}
	return fmt.Errorf("%s: %s", file, msg)
}

func yamlMessage(err error) string {
	return strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:\n  ", "")
}

// entryLines returns the line of each item of the sequence under key in the mapping m.
func entryLines(m *yaml.Node, key string) []int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			var out []int
			for _, item := range resolve(m.Content[i+1]).Content {
				out = append(out, item.Line)
			}
			return out
		}
	}
	return nil
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// checkBounds refuses documents nested deeper than MaxDepth, or with more than MaxNodes values
// once aliases are expanded where they are used, before anything decodes them.
func checkBounds(file string, root *yaml.Node) error {
	b := bounds{open: map[*yaml.Node]bool{}}
	if err := b.walk(root, 0, 0); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

type bounds struct {
	nodes int
	open  map[*yaml.Node]bool // nodes being walked: an alias to one of them is a cycle
}

// walk counts n and what it holds; aliasLine is the line of the outermost alias being expanded,
// the place to point at when the count runs over.
func (b *bounds) walk(n *yaml.Node, depth, aliasLine int) error {
	line := n.Line
	if aliasLine != 0 {
		line = aliasLine
	}
	if depth > MaxDepth {
		return fmt.Errorf("line %d: nested more than %d levels deep", line, MaxDepth)
	}
	if b.nodes++; b.nodes > MaxNodes {
		return fmt.Errorf("line %d: more than %d values once aliases are expanded", line, MaxNodes)
	}
	if n.Kind == yaml.AliasNode && aliasLine == 0 {
		aliasLine = n.Line
	}
	n = resolve(n)
	if b.open[n] {
		return fmt.Errorf("line %d: anchor %q contains an alias of itself", line, n.Anchor)
	}
	b.open[n] = true
	for _, c := range n.Content {
		if err := b.walk(c, depth+1, aliasLine); err != nil {
			return err
		}
	}
	delete(b.open, n)
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
