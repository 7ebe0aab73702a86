// Package internal_test enforces the dependency direction of ../shared/STYLE.md: imports point
// down the layers only, and pure layers do no I/O. It reads import lists with go/parser, so a
// violation fails `go test` the moment it is written.
package internal_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const module = "github.com/cdkbot/cdkbot/"

// layer of each internal package; a new package must be placed here on purpose.
var layer = map[string]int{
	"cfn": 0, "assembly": 0, "resourcespec": 0, "semver": 0, "config": 0, "failure": 0, "stackstate": 0, "commitid": 0, "pullrequest": 0, "findings": 0,
	"cfndiff": 1, "apps": 1, "compat": 1, "aspects": 1, "review": 1, "publishplan": 1, "deployplan": 1,
	"render":  2,
	"gitrepo": 3, "synth": 3, "githubapi": 3, "ghaction": 3, "awsconfig": 3, "publish": 3, "deploy": 3, "deployed": 3, "cfnstatus": 3, "mask": 3, "checkout": 3,
	"action": 4, "pipeline": 4,
	"cli": 5, "hook": 5,
	"testutil": 6, // imported by tests only
}

// sharedAdapters may be imported by other adapters. checkout: synth and the pipelines read a
// checkout's files the same way, never following links out of it.
var sharedAdapters = map[string]bool{"awsconfig": true, "mask": true, "cfnstatus": true, "checkout": true}

// forbiddenInPure are imports that mean I/O or an outside system; layers 0-2 take values instead.
var forbiddenInPure = []string{"os", "os/exec", "net/http", "github.com/aws/aws-sdk-go-v2", "github.com/google/go-github",
	"github.com/go-git/go-git", "github.com/sethvargo/go-githubactions"}

func TestDependencyDirection(t *testing.T) {
	pkgs := map[string][]string{} // internal package (top dir) -> imports of its non-test files
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		top := strings.Split(filepath.ToSlash(p), "/")[0]
		if top == p { // files of this package
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			pkgs[top] = append(pkgs[top], path)
		}
		if _, ok := pkgs[top]; !ok {
			pkgs[top] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, imports := range pkgs {
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("internal/%s is in no layer: place it in layers_test.go and ../shared/STYLE.md on purpose", pkg)
			continue
		}
		for _, imp := range imports {
			if l <= 2 {
				for _, bad := range forbiddenInPure {
					if imp == bad || strings.HasPrefix(imp, bad+"/") {
						t.Errorf("internal/%s (layer %d, pure) imports %s: take values, fs.FS or an interface instead", pkg, l, imp)
						break
					}
				}
			}
			dep, ok := strings.CutPrefix(imp, module+"internal/")
			if !ok {
				if strings.HasPrefix(imp, module) {
					t.Errorf("internal/%s imports %s: only cmd/cdkbot imports from outside internal", pkg, imp)
				}
				continue
			}
			dep = strings.Split(dep, "/")[0]
			dl := layer[dep]
			switch {
			case dep == pkg:
			case dep == "testutil":
				t.Errorf("internal/%s imports testutil outside tests", pkg)
			case l == 3 && dl == 3 && !sharedAdapters[dep]:
				t.Errorf("adapter internal/%s imports adapter internal/%s: adapters stay independent", pkg, dep)
			case l == 3 && (dl == 1 && dep == "review" || dl >= 2 && dl != 3):
				t.Errorf("adapter internal/%s imports internal/%s: adapters take model types only", pkg, dep)
			case (l < 3 || l == 4) && dl > l:
				t.Errorf("internal/%s (layer %d) imports internal/%s (layer %d): imports point down only", pkg, l, dep, dl)
			case l == 5 && dep == "cli" && pkg != "cli":
				t.Errorf("internal/%s imports cli: only cmd/cdkbot does", pkg)
			}
		}
	}
}

// maxLine is the longest line of non-test Go code, a tab counting as one character: code
// reads in a side-by-side diff without wrapping. (Tests keep their long literal tables.)
const maxLine = 120

func TestLineLength(t *testing.T) {
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && d.Name() != ".."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := utf8.RuneCountInString(line); n > maxLine {
				t.Errorf("%s:%d is %d characters long: wrap it at %d", p, i+1, n, maxLine)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The entry layer parses, wires and maps exit codes; the pipelines do the work. cli reaches the
// adapters that run things (synthesis, AWS, git, publishing) only through internal/pipeline and
// internal/action, and stays within ten internal imports.
func TestEntryLayerStaysThin(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("cli", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"internal/"); ok {
				imports[strings.Split(dep, "/")[0]] = true
			}
		}
	}
	for _, adapter := range []string{"synth", "deployed", "deploy", "publish", "publishplan", "awsconfig", "gitrepo", "checkout"} {
		if imports[adapter] {
			t.Errorf("internal/cli imports internal/%s: drive it through internal/pipeline", adapter)
		}
	}
	if len(imports) > 10 {
		t.Errorf("internal/cli imports %d internal packages (at most 10): %v", len(imports), imports)
	}
}
