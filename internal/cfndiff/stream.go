package cfndiff

import (
	"bytes"
	"runtime"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/cdkbot/cdkbot/internal/assembly"
	"github.com/cdkbot/cdkbot/internal/cfn"
)

// DiffAssembliesEach is DiffAssemblies stack by stack: each top-level stack's diff, in the order
// DiffAssemblies returns them and equal to what it returns, is handed to emit and then let go, so
// memory follows the largest stack (at most two per core diffed ahead), not the assembly. Parsed
// templates are always released (StackDiff.OldTemplate is nil). The first error stops the walk;
// stacks before it have been emitted.
//
// The pass across stacks runs first, on facts taken per stack (the exports a change alters, the
// imports of either side): only stacks that export what a stack imports are diffed for it (see
// crossFacts), and diffed again when they are emitted.
func DiffAssembliesEach(old, new *assembly.Assembly, keep func(*assembly.Stack) bool, opts Options,
	emit func(*StackDiff) error,
) error {
	opts.ReleaseTemplates = true
	pairs := matchStacks(old, new, keep)
	env := make([]string, len(pairs))
	for i, p := range pairs {
		info := p.new
		if info == nil {
			info = p.old
		}
		env[i] = info.Environment.String()
	}
	diffPair := func(p pair, o Options) (*StackDiff, error) {
		sd, err := diffStackPair(old, p.old, new, p.new, o)
		if err != nil {
			return nil, err
		}
		sd.facts = factsOf(sd)
		sd.release()
		return sd, nil
	}
	facts, err := crossFacts(pairs, env, opts, diffPair)
	if err != nil {
		return err
	}
	changed := map[string]map[string]string{} // environment → export name → why
	collect := func() bool {
		grew := false
		for i := range pairs {
			for name, why := range facts[i].changed {
				if changed[env[i]] == nil {
					changed[env[i]] = map[string]string{}
				}
				if _, ok := changed[env[i]][name]; !ok {
					changed[env[i]][name], grew = pairs[i].id()+": "+why, true
				}
			}
		}
		return grew
	}
	for round := 0; collect() && round < len(pairs); round++ {
		for i, p := range pairs {
			o := opts
			o.ChangedExports = changed[env[i]]
			if p.new == nil || !facts[i].hasNew || !importsAny(facts[i].newImports, o.ChangedExports) {
				continue
			}
			sd, err := diffPair(p, o)
			if err != nil {
				return err
			}
			facts[i] = sd.facts
		}
	}
	users := map[string]map[string][]string{} // environment → export name → importing stacks, as deployed
	for i := range pairs {
		if !facts[i].hasOld {
			continue
		}
		if users[env[i]] == nil {
			users[env[i]] = map[string][]string{}
		}
		for _, name := range facts[i].oldImports {
			if !slices.Contains(users[env[i]][name], pairs[i].id()) {
				users[env[i]][name] = append(users[env[i]][name], pairs[i].id())
			}
		}
	}
	for _, byName := range users {
		for _, ids := range byName {
			slices.Sort(ids)
		}
	}
	// Emitted as DiffAssemblies sorts; the pass above walked them in its order, as it does.
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pairs[order[a]].id() < pairs[order[b]].id() })
	return emitInOrder(len(pairs), func(k int) (*StackDiff, error) {
		i := order[k]
		o := opts
		if pairs[i].new != nil && facts[i].hasNew && importsAny(facts[i].newImports, changed[env[i]]) {
			o.ChangedExports = changed[env[i]]
		}
		sd, err := diffPair(pairs[i], o)
		if err != nil {
			return nil, err
		}
		if len(sd.facts.changed) > 0 {
			sd.ExportsInUse = exportsInUse(sd.ID, sd.facts.changed, users[env[i]])
		}
		return sd, nil
	}, emit)
}

// crossFacts takes what the pass across stacks reads of each stack. A stack whose templates name
// neither an import nor an export, and escape nothing that could spell one, has none: it is not
// parsed here. The others' templates are parsed for the exports and imports they name, and the
// stacks that export a name some stack of their environment imports, the only ones whose changed
// exports count, are diffed for them; on every core, and let go.
func crossFacts(pairs []pair, env []string, opts Options, diffPair func(pair, Options) (*StackDiff, error),
) ([]stackFacts, error) {
	facts := make([]stackFacts, len(pairs))
	exports := make([][]string, len(pairs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range pairs {
		facts[i] = stackFacts{hasOld: p.old != nil, hasNew: p.new != nil}
		if !mayCross(p, opts) {
			continue
		}
		g.Go(func() error {
			oldT, newT, err := topTemplates(p, opts)
			if err != nil {
				return err
			}
			if newT != nil {
				facts[i].newImports = cfn.ImportNames(get(newT, "Resources"))
			}
			if oldT != nil {
				for _, section := range []string{"Resources", "Outputs"} {
					facts[i].oldImports = append(facts[i].oldImports, cfn.ImportNames(get(oldT, section))...)
				}
				for _, name := range exportNames(oldT) {
					exports[i] = append(exports[i], name)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	imported := map[string]map[string]bool{} // environment → export names imported, as deployed or after
	for i := range pairs {
		for _, name := range slices.Concat(facts[i].newImports, facts[i].oldImports) {
			if imported[env[i]] == nil {
				imported[env[i]] = map[string]bool{}
			}
			imported[env[i]][name] = true
		}
	}
	for i, p := range pairs {
		if !slices.ContainsFunc(exports[i], func(name string) bool { return imported[env[i]][name] }) {
			continue
		}
		g.Go(func() error {
			sd, err := diffPair(p, opts)
			if err != nil {
				return err
			}
			facts[i] = sd.facts
			return nil
		})
	}
	return facts, g.Wait()
}

// topTemplates parses a pair's top-level templates as diffStackPair does; nil for an absent side.
func topTemplates(p pair, opts Options) (oldT, newT *cfn.Object, err error) {
	if p.old != nil {
		if oldT = opts.OldTemplates[p.old.QualifiedID()]; oldT == nil {
			if oldT, err = parseStackTemplate(p.old); err != nil {
				return nil, nil, err
			}
		}
	}
	if p.new != nil {
		if newT = opts.NewTemplates[p.new.QualifiedID()]; newT == nil {
			if newT, err = parseStackTemplate(p.new); err != nil {
				return nil, nil, err
			}
		}
	}
	return oldT, newT, nil
}

// mayCross says whether a stack's templates could export or import a value: they spell Import or
// Export (Fn::ImportValue, !ImportValue, an output's Export) or hold an escape that could spell
// one (JSON's \u; any in YAML, whose double-quoted strings also join escaped line breaks). Templates given in Options,
// or unreadable, may.
func mayCross(p pair, opts Options) bool {
	for _, s := range []*assembly.Stack{p.old, p.new} {
		if s == nil {
			continue
		}
		if opts.OldTemplates[s.QualifiedID()] != nil || opts.NewTemplates[s.QualifiedID()] != nil {
			return true
		}
		if raw, err := s.TemplateBytes(); err != nil || mentionsCross(raw) {
			return true
		}
	}
	return false
}

// emitInOrder runs work for 0..n-1 on every core, at most twice as many results alive as there
// are cores, and hands each result to emit in index order. The first error stops it.
func emitInOrder(n int, work func(int) (*StackDiff, error), emit func(*StackDiff) error) error {
	type result struct {
		sd  *StackDiff
		err error
	}
	results := make([]chan result, n)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	tokens := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := range n {
			select {
			case tokens <- struct{}{}:
			case <-done:
				return
			}
			go func() {
				sd, err := work(i)
				results[i] <- result{sd, err}
			}()
		}
	}()
	for i := range n {
		r := <-results[i]
		if r.err != nil {
			return r.err
		}
		if err := emit(r.sd); err != nil {
			return err
		}
		results[i] = nil
		<-tokens
	}
	return nil
}

// mentionsCross says whether a template's text could name an import or an export.
func mentionsCross(raw []byte) bool {
	if bytes.Contains(raw, []byte("Import")) || bytes.Contains(raw, []byte("Export")) {
		return true
	}
	// In JSON (what cfn.Parse reads as JSON) only \u spells a letter; in YAML, any escape may.
	escape := []byte(`\u`)
	if t := bytes.TrimLeft(raw, " \t\r\n\ufeff"); len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		escape = []byte(`\`)
	}
	return bytes.Contains(raw, escape)
}
