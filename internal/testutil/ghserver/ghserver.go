// Package ghserver is a fake GitHub REST and GraphQL API on httptest whose contract is GitHub's
// own description of its API (testutil/ghspec): every request the client sends must be a
// described operation with declared query parameters and a body its request schema accepts,
// every GraphQL document must validate against GitHub's schema, and every answer the fake
// gives is checked against the response schema, built from real webhook payloads. A violation
// fails the test. It models what cdkbot relies on: token kinds and the identities GitHub shows
// for them, issue comments with pagination, minimizing, pull requests, who labelled them, their
// reviews, collaborator permissions, check runs, deployments, issues, labels set and removed
// (recorded as label events by the token's login); with faults on demand
// (scripted answers before or after acting, a request stored and its answer lost).
package ghserver

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/testutil/ghspec"
)

// Identity is who a token acts as.
type Identity struct {
	// Login as GraphQL's viewer names it: "github-actions" for the Actions token, the app's
	// slug for a GitHub App installation token, the user for a personal access token.
	Login string
	// Bot: REST names the account "<login>[bot]" with type Bot; GET /user answers 403 for
	// installation tokens (the Actions token and App tokens).
	Bot bool
}

// REST is the login REST shows for the identity.
func (i Identity) REST() string {
	if i.Bot {
		return i.Login + "[bot]"
	}
	return i.Login
}

// Token kinds as scenarios.
var (
	ActionsToken = Identity{Login: "github-actions", Bot: true}
	AppToken     = Identity{Login: "cdk-deployer", Bot: true}
	PAT          = Identity{Login: "octocat"}
)

// Comment is a stored issue comment.
type Comment struct {
	ID        int64
	NodeID    string
	Body      string
	User      string // the REST login
	Minimized bool
	// Created and Updated come from the server's clock (Now), as GitHub's created_at and
	// updated_at do: an edit moves Updated.
	Created, Updated time.Time
	// Editor is who last edited the body, as GraphQL's IssueComment.editor names the account
	// (a bot without "[bot]"), and LastEdited when (lastEditedAt); "" and zero until an edit.
	Editor     string
	LastEdited time.Time
}

// PullRequest is a stored pull request.
type PullRequest struct {
	Number         int
	Title          string
	Author         string
	HeadSHA        string
	HeadRef        string
	HeadRepo       string // full name; another repository means a fork
	BaseSHA        string
	BaseRef        string
	MergeCommitSHA string
	Mergeable      *bool
	MergedAt       string // RFC 3339; "" while open
	Labels         []string
}

// LabelEvent records who applied a label.
type LabelEvent struct {
	Label   string
	Actor   string
	Removed bool      // an "unlabeled" event
	At      time.Time // created_at; zero is the server clock's start, before anything it stamps
}

// Review is a submitted pull request review.
type Review struct {
	User     string
	State    string
	CommitID string // the commit reviewed
}

// CheckRun is a created check run with every output it was given.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	ExternalID  string
	Title       string
	Summary     string
	Annotations []map[string]any
	Updates     int
}

// Deployment is a created deployment with the states it was moved through.
type Deployment struct {
	ID          int64
	Ref         string
	Environment string
	Description string
	States      []string
	LogURLs     []string
}

// Issue is an opened issue; its comments are in Comments under its number.
type Issue struct {
	Number int
	Title  string
	Body   string
	State  string
	User   string
	Labels []string
}

// Response is a scripted reply.
type Response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// Options configure a server.
type Options struct {
	Flavour ghspec.Flavour      // which description is the contract (default api.github.com)
	Tokens  map[string]Identity // token → identity
}

// Server is the fake API.
type Server struct {
	*httptest.Server
	t       testing.TB
	spec    *ghspec.REST
	base    string // API path prefix: "" on github.com, "/api/v3" on GHES
	graphql string // GraphQL path

	mu       sync.Mutex
	Tokens   map[string]Identity
	Comments map[int][]*Comment // by issue number
	Calls    []string           // "METHOD /path?query", the API prefix removed
	// Fail holds scripted responses by "METHOD /path", consumed in order, given before acting.
	Fail map[string][]Response
	// Drop loses the answer of the next n requests of "METHOD /path" after acting on them: the
	// connection closes before a byte of the answer is written.
	Drop map[string]int
	// FailAfter holds scripted responses by "METHOD /path", consumed in order, given after acting
	// on the request: GitHub stored it, then its answer was an error (a 502 from a proxy).
	FailAfter map[string][]Response
	// Slow delays the answers of the next requests of "METHOD /path", in order, each by its
	// duration, after acting on them (GitHub stored it; its answer is late). A client that gives
	// up first gets no answer.
	Slow        map[string][]time.Duration
	Pulls       map[int]*PullRequest
	CommitPulls map[string][]int // pull requests whose commits include sha
	LabelEvents map[int][]LabelEvent
	Reviews     map[int][]Review
	Permissions map[string]string // REST login → admin, maintain, write, triage, read (default none)
	CheckRuns   []*CheckRun
	Deployments []*Deployment
	Issues      []*Issue
	PerPage     int
	// EndlessPages answers every list with a Link to a next page, forever (a faulty server).
	EndlessPages bool
	// Operations counts requests by operationId (e.g. "issues/create-comment").
	Operations map[string]int
	nextID     int64
	ticks      int // the clock: see tick
}

// New starts a github.com server whose token acts as the Actions token; it stops with the test.
func New(t testing.TB, token string) *Server {
	return NewWith(t, Options{Tokens: map[string]Identity{token: ActionsToken}})
}

// NewWith starts a server; it stops with the test.
func NewWith(t testing.TB, o Options) *Server {
	if o.Flavour == "" {
		o.Flavour = ghspec.DotCom
	}
	s := &Server{t: t, spec: ghspec.Load(t, o.Flavour), graphql: "/graphql", Tokens: o.Tokens,
		Comments: map[int][]*Comment{}, Fail: map[string][]Response{}, Drop: map[string]int{},
		FailAfter: map[string][]Response{}, Slow: map[string][]time.Duration{}, PerPage: 100, nextID: 1000,
		Pulls: map[int]*PullRequest{}, CommitPulls: map[string][]int{}, LabelEvents: map[int][]LabelEvent{},
		Reviews: map[int][]Review{}, Permissions: map[string]string{}, Operations: map[string]int{}}
	if o.Flavour != ghspec.DotCom {
		s.base, s.graphql = "/api/v3", "/api/graphql"
	}
	ghspec.GraphQL(t) // parse once, outside any request
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is GITHUB_API_URL for this server; GraphQLURL is GITHUB_GRAPHQL_URL.
func (s *Server) APIURL() string     { return s.URL + s.base }
func (s *Server) GraphQLURL() string { return s.URL + s.graphql }

// Add stores a comment as written by the REST login.
// clockStart is where the server's clock starts; every stamp it gives is later.
var clockStart = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// tick is the server's clock: a second later on every call, so what happens in a test happens
// in order on GitHub's clock too. Call with s.mu held.
func (s *Server) tick() time.Time {
	s.ticks++
	return clockStart.Add(time.Duration(s.ticks) * time.Second)
}

// Label applies label to pull request issue as actor, now: the event GitHub records, and the
// label on the pull request.
func (s *Server) Label(issue int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LabelEvents[issue] = append(s.LabelEvents[issue],
		LabelEvent{Label: label, Actor: actor, At: s.tick()})
	if pr := s.Pulls[issue]; pr != nil && !slices.Contains(pr.Labels, label) {
		pr.Labels = append(pr.Labels, label)
	}
}

// Unlabel removes label from pull request issue as actor, now.
func (s *Server) Unlabel(issue int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.LabelEvents[issue] = append(s.LabelEvents[issue],
		LabelEvent{Label: label, Actor: actor, Removed: true, At: s.tick()})
	if pr := s.Pulls[issue]; pr != nil {
		pr.Labels = slices.DeleteFunc(pr.Labels, func(l string) bool { return l == label })
	}
}

func (s *Server) Add(issue int, login, body string) *Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(issue, login, body)
}

func (s *Server) addComment(issue int, login, body string) *Comment {
	s.nextID++
	now := s.tick()
	c := &Comment{ID: s.nextID, NodeID: fmt.Sprintf("IC_%d", s.nextID), Body: body, User: login,
		Created: now, Updated: now}
	s.Comments[issue] = append(s.Comments[issue], c)
	return c
}

// Edit replaces the body of comment c as login (a REST login), now: what a collaborator with
// write access can do to any comment, cdkbot's too. GitHub keeps the author and records the
// editor, as GraphQL shows it.
func (s *Server) Edit(c *Comment, login, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edit(c, login, body)
}

func (s *Server) edit(c *Comment, login, body string) {
	c.Body, c.Updated = body, s.tick()
	c.Editor, c.LastEdited = strings.TrimSuffix(login, "[bot]"), c.Updated
}

// CallsSince returns the calls after the first n.
func (s *Server) CallsSince(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Calls[n:]...)
}

// Count returns how many requests of operationId were served.
func (s *Server) Count(operationID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Operations[operationID]
}

// violation fails the test: the client sent what GitHub does not describe, or the fake
// answered what GitHub would not.
func (s *Server) violation(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.t.Errorf("GitHub contract: %s", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	if path != s.graphql {
		var ok bool
		if path, ok = strings.CutPrefix(path, s.base); !ok || path == "" {
			s.violation(w, http.StatusNotFound, "%s %s is outside the API base %q", r.Method, r.URL.Path, s.base)
			return
		}
	}
	key := r.Method + " " + path
	call := key
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.RawQuery
	}
	s.Calls = append(s.Calls, call)
	var late time.Duration
	if d := s.Slow[key]; len(d) > 0 {
		late, s.Slow[key] = d[0], d[1:]
	}

	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	who, authed := s.Tokens[token]
	rec := httptest.NewRecorder()
	var op *ghspec.Operation
	switch {
	case path == s.graphql && r.Method == http.MethodPost:
		if !authed {
			writeJSON(rec, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
			break
		}
		if script := s.Fail[key]; len(script) > 0 {
			s.Fail[key] = script[1:]
			w.WriteHeader(script[0].Status)
			fmt.Fprint(w, script[0].Body)
			return
		}
		if !s.serveGraphQL(w, rec, who, body) {
			return
		}
	default:
		var err error
		op, err = s.spec.CheckRequest(r.Method, path, r.URL.Query(), body)
		if err != nil {
			s.violation(w, http.StatusNotFound, "%v", err)
			return
		}
		s.Operations[op.ID]++
		logOperation(op)
		if !authed {
			writeJSON(rec, http.StatusUnauthorized, map[string]any{
				"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest",
			})
			break
		}
		if script := s.Fail[key]; len(script) > 0 {
			s.Fail[key] = script[1:]
			if !s.wait(r, late) {
				return
			}
			for k, v := range script[0].Headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(script[0].Status)
			fmt.Fprint(w, script[0].Body)
			return
		}
		s.serveREST(rec, r, op, who, path, body)
		if err := s.spec.CheckResponse(op, rec.Code, rec.Body.Bytes()); err != nil {
			s.violation(w, http.StatusInternalServerError, "the fake's own answer: %v", err)
			return
		}
		if script := s.FailAfter[key]; len(script) > 0 {
			s.FailAfter[key] = script[1:]
			rec = httptest.NewRecorder()
			for k, v := range script[0].Headers {
				rec.Header().Set(k, v)
			}
			rec.WriteHeader(script[0].Status)
			fmt.Fprint(rec, script[0].Body)
		}
	}
	if s.Drop[key] > 0 {
		s.Drop[key]--
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	if !s.wait(r, late) {
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// wait holds an answer back for d, letting other requests through meanwhile (called with s.mu
// held); false when the client gave up first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// logOperation appends each served operation to $GHSERVER_OPERATIONS_LOG, when set: the list
// of every request kind the tests sent, each validated against GitHub's description.
func logOperation(op *ghspec.Operation) {
	path := os.Getenv("GHSERVER_OPERATIONS_LOG")
	if path == "" {
		return
	}
	if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(f, "%s\t%s %s\n", op.ID, op.Method, op.Template)
		f.Close()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message": "Not Found", "documentation_url": "https://docs.github.com/rest",
	})
}

// serveGraphQL answers into rec; false when it answered w directly (a violation).
func (s *Server) serveGraphQL(w http.ResponseWriter, rec *httptest.ResponseRecorder, who Identity, body []byte) bool {
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.violation(w, http.StatusBadRequest, "GraphQL request is not JSON: %v", err)
		return false
	}
	if _, err := ghspec.CheckGraphQL(ghspec.GraphQL(s.t), req.Query, req.Variables); err != nil {
		s.violation(w, http.StatusOK, "%v", err)
		return false
	}
	data := map[string]any{}
	logOperation(&ghspec.Operation{ID: "graphql", Method: "POST", Template: strings.Join(strings.Fields(req.Query), " ")})
	switch {
	case strings.Contains(req.Query, "pullRequest(number:") && strings.Contains(req.Query, "lastEditedAt"):
		data["repository"] = s.commentEditsJSON(req.Variables)
	case strings.Contains(req.Query, "viewer"):
		data["viewer"] = map[string]any{"login": who.Login}
	case strings.Contains(req.Query, "minimizeComment"):
		id, _ := req.Variables["id"].(string)
		found := false
		for _, cs := range s.Comments {
			for _, c := range cs {
				if c.NodeID == id {
					c.Minimized, found = true, true
				}
			}
		}
		if !found {
			writeJSON(rec, http.StatusOK, map[string]any{
				"data": map[string]any{"minimizeComment": nil},
				"errors": []any{map[string]any{
					"type":    "NOT_FOUND",
					"message": fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id),
				}},
			})
			return true
		}
		data["minimizeComment"] = map[string]any{"minimizedComment": map[string]any{"isMinimized": true}}
	default:
		s.violation(w, http.StatusOK, "the fake does not answer this GraphQL document: %s", req.Query)
		return false
	}
	writeJSON(rec, http.StatusOK, map[string]any{"data": data})
	return true
}

// commentEditsJSON answers repository.pullRequest(number).comments(first: 100, after) with each
// comment's id, lastEditedAt and editor, paginated like GitHub (the cursor is opaque to the client).
func (s *Server) commentEditsJSON(vars map[string]any) any {
	n, _ := vars["number"].(float64)
	pr, ok := s.Pulls[int(n)]
	if !ok {
		return map[string]any{"pullRequest": nil}
	}
	start := 0
	if after, ok := vars["after"].(string); ok {
		i, err := strconv.Atoi(strings.TrimPrefix(after, "cursor:"))
		if err != nil {
			s.t.Errorf("ghserver: a cursor the fake never gave: %q", after)
		}
		start = i
	}
	all := s.Comments[pr.Number]
	start = min(start, len(all))
	end := min(start+min(100, s.PerPage), len(all))
	nodes := []any{}
	for _, c := range all[start:end] {
		node := map[string]any{"id": c.NodeID, "lastEditedAt": nil, "editor": nil}
		if c.Editor != "" {
			node["lastEditedAt"], node["editor"] = c.LastEdited.Format(time.RFC3339), map[string]any{"login": c.Editor}
		}
		nodes = append(nodes, node)
	}
	return map[string]any{"pullRequest": map[string]any{"comments": map[string]any{
		"pageInfo": map[string]any{"hasNextPage": end < len(all) || s.EndlessPages,
			"endCursor": "cursor:" + strconv.Itoa(end)},
		"nodes": nodes,
	}}}
}

// serveREST acts on a described request and writes GitHub's answer.
func (s *Server) serveREST(
	w *httptest.ResponseRecorder, r *http.Request, op *ghspec.Operation, who Identity, path string, body []byte,
) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	num := func(i int) int { n, _ := strconv.Atoi(parts[i]); return n }
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	str := func(k string) string { v, _ := in[k].(string); return v }
	switch op.ID {
	case "users/get-authenticated":
		if who.Bot {
			writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration",
				"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"})
			return
		}
		writeJSON(w, http.StatusOK, privateUser(who.REST()))
	case "issues/list-comments":
		all := s.Comments[num(4)]
		items := make([]any, 0, len(all))
		for _, c := range all {
			items = append(items, s.commentJSON(num(4), c))
		}
		s.page(w, r, items)
	case "issues/create-comment":
		c := s.addComment(num(4), who.REST(), str("body"))
		if len(c.Body) > 65536 {
			s.Comments[num(4)] = s.Comments[num(4)][:len(s.Comments[num(4)])-1]
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
				"errors": []any{map[string]any{
					"resource": "IssueComment", "code": "custom", "field": "body",
					"message": "body is too long (maximum is 65536 characters)",
				}},
			})
			return
		}
		writeJSON(w, http.StatusCreated, s.commentJSON(num(4), c))
	case "issues/update-comment":
		if n, _, c, ok := s.ownComment(w, parts[5], who); ok {
			s.edit(c, who.REST(), str("body"))
			writeJSON(w, http.StatusOK, s.commentJSON(n, c))
		}
	case "issues/delete-comment":
		if n, i, _, ok := s.ownComment(w, parts[5], who); ok {
			s.Comments[n] = slices.Delete(s.Comments[n], i, i+1)
			w.WriteHeader(http.StatusNoContent)
		}
	case "issues/add-labels":
		pr, ok := s.Pulls[num(4)]
		if !ok {
			notFound(w)
			return
		}
		for _, name := range labelNames(body) {
			if !slices.Contains(pr.Labels, name) {
				pr.Labels = append(pr.Labels, name)
				s.LabelEvents[pr.Number] = append(s.LabelEvents[pr.Number],
					LabelEvent{Label: name, Actor: who.REST(), At: s.tick()})
			}
		}
		writeJSON(w, http.StatusOK, labelsJSON(s.t, pr.Labels))
	case "issues/remove-label":
		pr, ok := s.Pulls[num(4)]
		if !ok || !slices.Contains(pr.Labels, parts[6]) {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Label does not exist",
				"documentation_url": "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"})
			return
		}
		pr.Labels = slices.DeleteFunc(pr.Labels, func(l string) bool { return l == parts[6] })
		s.LabelEvents[pr.Number] = append(s.LabelEvents[pr.Number],
			LabelEvent{Label: parts[6], Actor: who.REST(), Removed: true, At: s.tick()})
		writeJSON(w, http.StatusOK, labelsJSON(s.t, pr.Labels))
	case "pulls/get":
		pr, ok := s.Pulls[num(4)]
		if !ok {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, s.pullJSON(pr))
	case "pulls/list":
		owner, branch, _ := strings.Cut(r.URL.Query().Get("head"), ":")
		items := []any{}
		for _, n := range slices.Sorted(maps.Keys(s.Pulls)) {
			pr := s.Pulls[n]
			repo := pr.HeadRepo
			if repo == "" {
				repo = "acme/shop"
			}
			open := pr.MergedAt == ""
			if r.URL.Query().Get("state") == "open" && !open {
				continue
			}
			if owner != "" && (!strings.HasPrefix(repo, owner+"/") || pr.HeadRef != branch) {
				continue
			}
			items = append(items, s.pullJSON(pr))
		}
		s.page(w, r, items)
	case "repos/list-pull-requests-associated-with-commit":
		items := []any{}
		for _, n := range s.CommitPulls[parts[4]] {
			if pr, ok := s.Pulls[n]; ok {
				items = append(items, s.pullJSON(pr))
			}
		}
		s.page(w, r, items)
	case "issues/list-events":
		items := []any{}
		for i, e := range s.LabelEvents[num(4)] {
			event, at := "labeled", e.At
			if e.Removed {
				event = "unlabeled"
			}
			if at.IsZero() {
				at = clockStart
			}
			items = append(items, map[string]any{
				"id": 9000 + i, "node_id": fmt.Sprintf("LE_%d", i), "url": s.URL + "/events/" + strconv.Itoa(9000+i),
				"actor": simpleUser(e.Actor), "event": event, "commit_id": nil, "commit_url": nil,
				"created_at": at.Format(time.RFC3339), "performed_via_github_app": nil,
				"label": map[string]any{"name": e.Label, "color": "d73a4a"},
			})
		}
		s.page(w, r, items)
	case "pulls/list-reviews":
		items := []any{}
		for i, rv := range s.Reviews[num(4)] {
			obj := template(s.t, "pull_request_review", "submitted", "review")
			obj["id"], obj["node_id"], obj["user"], obj["state"], obj["body"] =
				7000+i, fmt.Sprintf("PRR_%d", i), simpleUser(rv.User), rv.State, ""
			obj["commit_id"] = rv.CommitID
			items = append(items, obj)
		}
		s.page(w, r, items)
	case "repos/get-collaborator-permission-level":
		role := s.Permissions[parts[4]]
		if role == "" {
			role = "none"
		}
		perm := map[string]string{"maintain": "write", "triage": "read"}[role]
		if perm == "" {
			perm = role
		}
		u := simpleUser(parts[4])
		u["role_name"] = role
		writeJSON(w, http.StatusOK, map[string]any{"permission": perm, "role_name": role, "user": u})
	case "checks/create":
		s.nextID++
		cr := &CheckRun{
			ID: s.nextID, Name: str("name"), HeadSHA: str("head_sha"), Status: str("status"),
			Conclusion: str("conclusion"), ExternalID: str("external_id"),
		}
		if cr.Conclusion != "" {
			cr.Status = "completed"
		}
		s.output(cr, in)
		s.CheckRuns = append(s.CheckRuns, cr)
		writeJSON(w, http.StatusCreated, s.checkRunJSON(cr))
	case "checks/update":
		id, _ := strconv.ParseInt(parts[4], 10, 64)
		for _, cr := range s.CheckRuns {
			if cr.ID == id {
				cr.Updates++
				if c := str("conclusion"); c != "" {
					cr.Conclusion, cr.Status = c, "completed"
				}
				s.output(cr, in)
				writeJSON(w, http.StatusOK, s.checkRunJSON(cr))
				return
			}
		}
		notFound(w)
	case "checks/list-for-ref":
		// filter=latest, the default, shows only the newest check run of each name.
		q := r.URL.Query()
		runs, newest := []any{}, map[string]int64{}
		for _, cr := range s.CheckRuns {
			if cr.HeadSHA == parts[4] {
				newest[cr.Name] = max(newest[cr.Name], cr.ID)
			}
		}
		for _, cr := range s.CheckRuns {
			if cr.HeadSHA == parts[4] && (q.Get("check_name") == "" || q.Get("check_name") == cr.Name) &&
				(q.Get("filter") == "all" || newest[cr.Name] == cr.ID) {
				runs = append(runs, s.checkRunJSON(cr))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
	case "repos/create-deployment":
		s.nextID++
		d := &Deployment{ID: s.nextID, Ref: str("ref"), Environment: str("environment"), Description: str("description")}
		s.Deployments = append(s.Deployments, d)
		writeJSON(w, http.StatusCreated, s.deploymentJSON(d))
	case "repos/list-deployments":
		items := []any{}
		for _, d := range s.Deployments {
			if q := r.URL.Query(); (q.Get("ref") == "" || q.Get("ref") == d.Ref) &&
				(q.Get("environment") == "" || q.Get("environment") == d.Environment) {
				items = append(items, s.deploymentJSON(d))
			}
		}
		s.page(w, r, items)
	case "repos/create-deployment-status":
		id, _ := strconv.ParseInt(parts[4], 10, 64)
		for _, d := range s.Deployments {
			if d.ID == id {
				d.States, d.LogURLs = append(d.States, str("state")), append(d.LogURLs, str("log_url"))
				obj := template(s.t, "deployment_status", "created", "deployment_status")
				obj["id"], obj["state"], obj["description"], obj["log_url"], obj["environment"] =
					id*10+int64(len(d.States)), str("state"), str("description"), str("log_url"), d.Environment
				obj["creator"], obj["target_url"] = simpleUser(who.REST()), str("log_url")
				writeJSON(w, http.StatusCreated, obj)
				return
			}
		}
		notFound(w)
	case "issues/list-for-repo":
		want := r.URL.Query().Get("labels")
		items := []any{}
		for _, is := range s.Issues {
			if is.State == r.URL.Query().Get("state") && (want == "" || slices.Contains(is.Labels, want)) {
				items = append(items, s.issueJSON(is))
			}
		}
		s.page(w, r, items)
	case "issues/create":
		var labels []string
		for _, l := range asList(in["labels"]) {
			if n, ok := l.(string); ok {
				labels = append(labels, n)
			}
		}
		is := &Issue{
			Number: 500 + len(s.Issues), Title: str("title"), Body: str("body"), State: "open",
			User: who.REST(), Labels: labels,
		}
		s.Issues = append(s.Issues, is)
		writeJSON(w, http.StatusCreated, s.issueJSON(is))
	default:
		s.t.Errorf("ghserver: %s (%s %s) is described by GitHub but not modelled by the fake", op.ID, r.Method, path)
		notFound(w)
	}
}

func (s *Server) output(cr *CheckRun, in map[string]any) {
	out, _ := in["output"].(map[string]any)
	if out == nil {
		return
	}
	if v, ok := out["title"].(string); ok {
		cr.Title = v
	}
	if v, ok := out["summary"].(string); ok {
		cr.Summary = v
	}
	for _, a := range asList(out["annotations"]) {
		if m, ok := a.(map[string]any); ok {
			cr.Annotations = append(cr.Annotations, m)
		}
	}
}

// page answers a list the way GitHub paginates it: per_page (default 30, at most 100), page,
// and a Link header with rel="next" while more remain.
func (s *Server) page(w http.ResponseWriter, r *http.Request, all []any) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100, s.PerPage)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 1 {
		page = 1
	}
	start, end := min((page-1)*per, len(all)), min(page*per, len(all))
	if end < len(all) || s.EndlessPages {
		next := *r.URL
		q := next.Query()
		q.Set("page", strconv.Itoa(page+1))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, all[start:end])
}

var (
	tmplMu sync.Mutex
	tmpls  = map[string][]byte{}
)

// template is a fresh copy of a real webhook payload's object (event, action, key): real
// GitHub objects are the starting point of every answer, so their shape is GitHub's.
func template(t testing.TB, event, action, key string) map[string]any {
	tmplMu.Lock()
	raw, ok := tmpls[event+"/"+action+"/"+key]
	if !ok {
		for _, h := range ghspec.Webhooks(t, event) {
			if h.Action == action {
				var p map[string]json.RawMessage
				_ = json.Unmarshal(h.Payload, &p)
				raw = p[key]
				break
			}
		}
		tmpls[event+"/"+action+"/"+key] = raw
	}
	tmplMu.Unlock()
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Errorf("ghserver: no %s.%s payload with %q: %v", event, action, key, err)
	}
	return out
}

var userIDs sync.Map

func simpleUser(login string) map[string]any {
	id, _ := userIDs.LoadOrStore(strings.ToLower(login), int64(4000+len(login)*97+int(login[0])))
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	u := map[string]any{"login": login, "id": id, "node_id": fmt.Sprintf("U_%d", id),
		"avatar_url": "https://avatars.githubusercontent.com/u/1", "gravatar_id": "",
		"url": "https://api.github.com/users/" + login, "html_url": "https://github.com/" + login,
		"type": typ, "site_admin": false}
	for _, k := range []string{
		"followers", "following", "gists", "starred", "subscriptions", "organizations", "repos", "events", "received_events",
	} {
		u[k+"_url"] = "https://api.github.com/users/" + login + "/" + k
	}
	return u
}

func privateUser(login string) map[string]any {
	u := simpleUser(login)
	for k, v := range map[string]any{
		"name": login, "company": nil, "blog": "", "location": nil, "email": nil, "hireable": nil, "bio": nil,
		"public_repos": 1, "public_gists": 0, "followers": 0, "following": 0,
		"created_at": "2020-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
		"private_gists": 0, "total_private_repos": 0, "owned_private_repos": 0, "disk_usage": 0, "collaborators": 0,
		"two_factor_authentication": true,
	} {
		u[k] = v
	}
	return u
}

func (s *Server) commentJSON(issue int, c *Comment) map[string]any {
	obj := template(s.t, "issue_comment", "created", "comment")
	obj["id"], obj["node_id"], obj["body"], obj["user"] = c.ID, c.NodeID, c.Body, simpleUser(c.User)
	obj["html_url"] = fmt.Sprintf("https://github.test/acme/shop/issues/%d#issuecomment-%d", issue, c.ID)
	obj["url"] = fmt.Sprintf("%s/repos/acme/shop/issues/comments/%d", s.URL, c.ID)
	obj["issue_url"] = fmt.Sprintf("%s/repos/acme/shop/issues/%d", s.URL, issue)
	obj["created_at"], obj["updated_at"] = c.Created.Format(time.RFC3339), c.Updated.Format(time.RFC3339)
	return obj
}

func labelsJSON(t testing.TB, names []string) []any {
	out := []any{}
	for i, n := range names {
		l := template(t, "pull_request", "labeled", "label")
		l["id"], l["node_id"], l["name"] = 600+i, fmt.Sprintf("LA_%d", i), n
		out = append(out, l)
	}
	return out
}

func (s *Server) pullJSON(pr *PullRequest) map[string]any {
	obj := template(s.t, "pull_request", "opened", "pull_request")
	obj["number"], obj["title"], obj["user"], obj["labels"] =
		pr.Number, pr.Title, simpleUser(pr.Author), labelsJSON(s.t, pr.Labels)
	obj["auto_merge"] = nil
	obj["merge_commit_sha"] = nilIfEmpty(pr.MergeCommitSHA)
	if pr.Mergeable != nil {
		obj["mergeable"] = *pr.Mergeable
	} else {
		obj["mergeable"] = nil
	}
	obj["merged_at"], obj["merged"] = nilIfEmpty(pr.MergedAt), pr.MergedAt != ""
	if pr.MergedAt != "" {
		obj["state"], obj["closed_at"] = "closed", pr.MergedAt
	}
	head, base := obj["head"].(map[string]any), obj["base"].(map[string]any)
	head["sha"], head["ref"], base["sha"], base["ref"] = pr.HeadSHA, pr.HeadRef, pr.BaseSHA, pr.BaseRef
	repo := head["repo"].(map[string]any)
	base["repo"].(map[string]any)["full_name"] = "acme/shop"
	repo["full_name"], repo["fork"] = "acme/shop", false
	if pr.HeadRepo != "" && pr.HeadRepo != "acme/shop" {
		repo["full_name"], repo["fork"] = pr.HeadRepo, true
	}
	return obj
}

func (s *Server) checkRunJSON(cr *CheckRun) map[string]any {
	obj := template(s.t, "check_run", "completed", "check_run")
	obj["id"], obj["node_id"], obj["name"], obj["head_sha"], obj["status"] =
		cr.ID, fmt.Sprintf("CR_%d", cr.ID), cr.Name, cr.HeadSHA, cr.Status
	obj["conclusion"], obj["external_id"] = nilIfEmpty(cr.Conclusion), cr.ExternalID
	obj["html_url"] = fmt.Sprintf("https://github.test/acme/shop/runs/%d", cr.ID)
	obj["url"] = fmt.Sprintf("%s/repos/acme/shop/check-runs/%d", s.URL, cr.ID)
	out := obj["output"].(map[string]any)
	out["title"], out["summary"], out["text"], out["annotations_count"] =
		nilIfEmpty(cr.Title), nilIfEmpty(cr.Summary), nil, len(cr.Annotations)
	return obj
}

func (s *Server) deploymentJSON(d *Deployment) map[string]any {
	obj := template(s.t, "deployment", "created", "deployment")
	obj["id"], obj["node_id"], obj["ref"], obj["sha"], obj["environment"], obj["description"] =
		d.ID, fmt.Sprintf("DE_%d", d.ID), d.Ref, d.Ref, d.Environment, d.Description
	return obj
}

func (s *Server) issueJSON(is *Issue) map[string]any {
	obj := template(s.t, "issues", "opened", "issue")
	obj["number"], obj["title"], obj["body"], obj["state"], obj["user"], obj["labels"] =
		is.Number, is.Title, is.Body, is.State, simpleUser(is.User), labelsJSON(s.t, is.Labels)
	obj["html_url"] = fmt.Sprintf("https://github.test/acme/shop/issues/%d", is.Number)
	delete(obj, "pull_request")
	return obj
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ownComment finds the comment whose id is rawID for a request by who to change: its issue, its
// index there and itself; ok is false when it answered instead (404: no such comment, 403:
// another identity's, which a token may not change).
func (s *Server) ownComment(w *httptest.ResponseRecorder, rawID string, who Identity) (int, int, *Comment, bool) {
	id, _ := strconv.ParseInt(rawID, 10, 64)
	for n, cs := range s.Comments {
		for i, c := range cs {
			if c.ID == id {
				if !strings.EqualFold(c.User, who.REST()) {
					writeJSON(w, http.StatusForbidden, map[string]any{"message": "Resource not accessible by integration"})
					return 0, 0, nil, false
				}
				return n, i, c, true
			}
		}
	}
	notFound(w)
	return 0, 0, nil, false
}

// labelNames reads the labels of an add-labels body, in any of the shapes GitHub takes: a list
// of names, {"labels": [names]}, or either with {"name": ...} objects.
func labelNames(body []byte) []string {
	var raw any
	_ = json.Unmarshal(body, &raw)
	if m, ok := raw.(map[string]any); ok {
		raw = m["labels"]
	}
	var out []string
	for _, l := range asList(raw) {
		switch v := l.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			if n, ok := v["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Body returns the newest comment on issue, or "".
func (s *Server) Body(issue int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.Comments[issue]
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}
