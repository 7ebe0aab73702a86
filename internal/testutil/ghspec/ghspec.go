// Package ghspec holds GitHub's own descriptions of its API — the official REST OpenAPI
// description, the GraphQL schema and real webhook payloads, installed pinned from npm by
// scripts/github-descriptions.sh — and checks requests and responses against them. It is the
// contract of the project's fake GitHub (testutil/ghserver): a request GitHub does not describe,
// a body its schema rejects or a GraphQL document its schema does not validate fails the test,
// so the fake cannot drift into agreeing with the client's assumptions.
package ghspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// Flavour names one of GitHub's API descriptions.
type Flavour string

// The descriptions kept by the install script.
const (
	DotCom Flavour = "api.github.com"
	GHES   Flavour = "ghes-3.19"
)

var (
	dirOnce sync.Once
	dir     string
	dirErr  error

	mu    sync.Mutex
	specs = map[Flavour]*REST{}

	gqlOnce   sync.Once
	gqlSchema *ast.Schema
	gqlErr    error
)

// Dir installs the descriptions once (scripts/github-descriptions.sh) and returns their directory.
func Dir(t testing.TB) string {
	t.Helper()
	dirOnce.Do(func() {
		script := filepath.Join(repoRoot(), "scripts", "github-descriptions.sh")
		var stderr bytes.Buffer
		cmd := exec.Command("bash", script)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			dirErr = fmt.Errorf("%s: %v\n%s", script, err, stderr.String())
			return
		}
		dir = strings.TrimSpace(string(out))
	})
	if dirErr != nil {
		t.Fatalf("GitHub's API descriptions are not installed: %v", dirErr)
	}
	return dir
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// REST is one OpenAPI description with its operations indexed by path.
type REST struct {
	Flavour  Flavour
	doc      map[string]any
	routes   []route
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

type route struct {
	template string
	segments []string
	literal  int // literal segments: the more, the more specific
}

// Operation is a described REST operation.
type Operation struct {
	ID       string // operationId, e.g. "issues/create-comment"
	Method   string
	Template string // e.g. /repos/{owner}/{repo}/issues/{issue_number}/comments
	node     map[string]any
}

const docURL = "https://ghspec.test/openapi.json"

// Load reads (once per test binary) the REST description of flavour.
func Load(t testing.TB, flavour Flavour) *REST {
	t.Helper()
	base := Dir(t)
	mu.Lock()
	defer mu.Unlock()
	if s, ok := specs[flavour]; ok {
		return s
	}
	raw, err := os.ReadFile(filepath.Join(base, "openapi", string(flavour)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", flavour, err)
	}
	toJSONSchema(doc)
	s := &REST{Flavour: flavour, doc: doc, compiled: map[string]*jsonschema.Schema{}}
	for tmpl := range doc["paths"].(map[string]any) {
		r := route{template: tmpl, segments: strings.Split(strings.Trim(tmpl, "/"), "/")}
		for _, seg := range r.segments {
			if !strings.HasPrefix(seg, "{") {
				r.literal++
			}
		}
		s.routes = append(s.routes, r)
	}
	sort.Slice(s.routes, func(i, j int) bool { return s.routes[i].template < s.routes[j].template })
	s.compiler = jsonschema.NewCompiler()
	s.compiler.DefaultDraft(jsonschema.Draft4) // OpenAPI 3.0's schema dialect is draft-04/05 based
	if err := s.compiler.AddResource(docURL, doc); err != nil {
		t.Fatal(err)
	}
	specs[flavour] = s
	return s
}

// toJSONSchema rewrites OpenAPI 3.0's schema dialect into JSON Schema in place: `nullable: true`
// becomes a "null" type (or an anyOf with null where there is no type).
func toJSONSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			x[k] = toJSONSchema(child)
		}
		if x["nullable"] == true {
			delete(x, "nullable")
			if typ, ok := x["type"].(string); ok {
				x["type"] = []any{typ, "null"}
				if enum, ok := x["enum"].([]any); ok {
					x["enum"] = append(enum, nil)
				}
				return x
			}
			return map[string]any{"anyOf": []any{x, map[string]any{"type": "null"}}}
		}
		return x
	case []any:
		for i, child := range x {
			x[i] = toJSONSchema(child)
		}
	}
	return v
}

// Find returns the operation that serves method and path (the API base path already removed),
// preferring the template with the most literal segments, as GitHub's router does.
func (s *REST) Find(method, path string) (*Operation, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *route
	for i := range s.routes {
		r := &s.routes[i]
		if len(r.segments) != len(segs) || (best != nil && r.literal <= best.literal) {
			continue
		}
		ok := true
		for j, seg := range r.segments {
			if strings.HasPrefix(seg, "{") {
				ok = segs[j] != ""
			} else {
				ok = seg == segs[j]
			}
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		if _, has := s.doc["paths"].(map[string]any)[r.template].(map[string]any)[strings.ToLower(method)]; has {
			best = r
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s %s is not an operation of GitHub's REST API (%s description)", method, path, s.Flavour)
	}
	node := s.doc["paths"].(map[string]any)[best.template].(map[string]any)[strings.ToLower(method)].(map[string]any)
	id, _ := node["operationId"].(string)
	return &Operation{ID: id, Method: method, Template: best.template, node: node}, nil
}

// CheckRequest checks a request against the description: the operation exists, every query
// parameter is one it declares, and a JSON body validates against its request schema.
func (s *REST) CheckRequest(method, path string, query url.Values, body []byte) (*Operation, error) {
	op, err := s.Find(method, path)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, p := range s.parameters(op) {
		if p["in"] == "query" {
			declared[p["name"].(string)] = true
		}
	}
	for name := range query {
		if !declared[name] {
			return op, fmt.Errorf("%s (%s %s): query parameter %q is not described", op.ID, method, op.Template, name)
		}
	}
	rb := s.resolve(op.node["requestBody"])
	if rb == nil {
		if len(bytes.TrimSpace(body)) > 0 {
			return op, fmt.Errorf("%s (%s %s): sends a body, but the operation takes none", op.ID, method, op.Template)
		}
		return op, nil
	}
	ptr, ok := s.jsonSchemaPointer(rb, "/paths/"+escape(op.Template)+"/"+strings.ToLower(method)+"/requestBody")
	if !ok {
		return op, nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if rb["required"] == true {
			return op, fmt.Errorf("%s (%s %s): the request body is required", op.ID, method, op.Template)
		}
		return op, nil
	}
	if err := s.validate(ptr, body); err != nil {
		return op, fmt.Errorf("%s (%s %s) request body: %v", op.ID, method, op.Template, err)
	}
	return op, nil
}

// CheckResponse checks a response the fake server sends for op: the status is described and a
// JSON body validates against that status's schema.
func (s *REST) CheckResponse(op *Operation, status int, body []byte) error {
	responses, _ := op.node["responses"].(map[string]any)
	code := strconv.Itoa(status)
	if _, ok := responses[code]; !ok {
		if status >= 400 {
			return nil // errors (401, 403, 404, 422, 5xx) are GitHub's generic error shape
		}
		return fmt.Errorf("%s (%s %s): status %d is not a described response", op.ID, op.Method, op.Template, status)
	}
	resp := s.resolve(responses[code])
	ptrBase := "/paths/" + escape(op.Template) + "/" + strings.ToLower(op.Method) + "/responses/" + code
	if ref, ok := responses[code].(map[string]any)["$ref"].(string); ok {
		ptrBase = strings.TrimPrefix(ref, "#")
	}
	ptr, ok := s.jsonSchemaPointer(resp, ptrBase)
	if !ok || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := s.validate(ptr, body); err != nil {
		return fmt.Errorf("%s (%s %s) response %d: %v", op.ID, op.Method, op.Template, status, err)
	}
	return nil
}

func (s *REST) parameters(op *Operation) []map[string]any {
	var out []map[string]any
	lists := []any{op.node["parameters"], s.doc["paths"].(map[string]any)[op.Template].(map[string]any)["parameters"]}
	for _, l := range lists {
		for _, p := range asList(l) {
			if m := s.resolve(p); m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// resolve follows an OpenAPI $ref (to components) once.
func (s *REST) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return m
	}
	var cur any = s.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		mm, _ := cur.(map[string]any)
		cur = mm[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	out, _ := cur.(map[string]any)
	return out
}

// jsonSchemaPointer is the JSON pointer of the application/json schema of a request body or
// response object located at base.
func (s *REST) jsonSchemaPointer(obj map[string]any, base string) (string, bool) {
	content, _ := obj["content"].(map[string]any)
	for _, mt := range []string{"application/json", "application/vnd.github.v3.star+json", "application/scim+json"} {
		if c, ok := content[mt].(map[string]any); ok && c["schema"] != nil {
			return base + "/content/" + escape(mt) + "/schema", true
		}
	}
	return "", false
}

func (s *REST) validate(ptr string, body []byte) error {
	s.mu.Lock()
	sch, ok := s.compiled[ptr]
	if !ok {
		var err error
		if sch, err = s.compiler.Compile(docURL + "#" + ptr); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("compile %s: %v", ptr, err)
		}
		s.compiled[ptr] = sch
	}
	s.mu.Unlock()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		return err
	}
	return nil
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// GraphQL returns GitHub's GraphQL schema (parsed once per test binary).
func GraphQL(t testing.TB) *ast.Schema {
	t.Helper()
	base := Dir(t)
	gqlOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join(base, "graphql", "schema.graphql"))
		if err != nil {
			gqlErr = err
			return
		}
		// GitHub's published schema defines a few fields twice (e.g.
		// EnterpriseOwnerInfo.repositoryDeployKeySetting in 15.26.1); keep the first definition.
		sd, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: "schema.graphql", Input: string(raw)})
		if err != nil {
			gqlErr = err
			return
		}
		for _, def := range sd.Definitions {
			seen := map[string]bool{}
			def.Fields = slices.DeleteFunc(def.Fields, func(f *ast.FieldDefinition) bool {
				dup := seen[f.Name]
				seen[f.Name] = true
				return dup
			})
		}
		gqlSchema, gqlErr = validator.ValidateSchemaDocument(sd)
	})
	if gqlErr != nil {
		t.Fatalf("GitHub's GraphQL schema: %v", gqlErr)
	}
	return gqlSchema
}

// CheckGraphQL validates a GraphQL request (document and variables) against the schema and
// returns its operation.
func CheckGraphQL(schema *ast.Schema, query string, variables map[string]any) (*ast.OperationDefinition, error) {
	doc, errs := gqlparser.LoadQuery(schema, query)
	if len(errs) > 0 {
		return nil, fmt.Errorf("GraphQL document does not validate against GitHub's schema: %v", errs)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("GraphQL request has %d operations, want 1", len(doc.Operations))
	}
	op := doc.Operations[0]
	if _, err := validator.VariableValues(schema, op, variables); err != nil {
		return nil, fmt.Errorf("GraphQL variables: %v", err)
	}
	return op, nil
}

// Webhook is one example payload of @octokit/webhooks-examples.
type Webhook struct {
	Event   string
	Action  string
	Payload json.RawMessage
}

var (
	hooksOnce sync.Once
	hooks     []Webhook
	hooksErr  error
)

// Webhooks returns the real example payloads of event (e.g. "pull_request"), in the package's order.
func Webhooks(t testing.TB, event string) []Webhook {
	t.Helper()
	base := Dir(t)
	hooksOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join(base, "webhooks", "api.github.com.json"))
		if err != nil {
			hooksErr = err
			return
		}
		var all []struct {
			Name     string            `json:"name"`
			Examples []json.RawMessage `json:"examples"`
		}
		if hooksErr = json.Unmarshal(raw, &all); hooksErr != nil {
			return
		}
		for _, e := range all {
			for _, ex := range e.Examples {
				var head struct {
					Action string `json:"action"`
				}
				_ = json.Unmarshal(ex, &head)
				hooks = append(hooks, Webhook{Event: e.Name, Action: head.Action, Payload: ex})
			}
		}
	})
	if hooksErr != nil {
		t.Fatalf("webhook examples: %v", hooksErr)
	}
	var out []Webhook
	for _, h := range hooks {
		if h.Event == event {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no webhook example for %q", event)
	}
	return out
}
