// Package ghserver is a fake GitHub REST and GraphQL API on httptest: the subset cdkbot uses
// (the authenticated user, issue comments with pagination, comment minimizing, pull requests of
// a commit, deployments and their statuses, issues listed by label and opened), with state
// and a log of every call, so tests drive the real go-github client and assert exact calls.
package ghserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Comment is a stored issue comment.
type Comment struct {
	ID        int64  `json:"id"`
	NodeID    string `json:"node_id"`
	Body      string `json:"body"`
	User      User   `json:"user"`
	HTMLURL   string `json:"html_url"`
	Minimized bool   `json:"-"`
}

// User is a GitHub account.
type User struct {
	Login string `json:"login"`
}

// Server is the fake API.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	Login    string                // who the token is
	Comments map[int][]*Comment    // by issue number
	Calls    []string              // "METHOD /path?query"
	Fail     map[string][]Response // scripted responses, consumed in order, by "METHOD /path"
	Token    string                // the token requests must carry
	Pulls    map[int]string        // pull request JSON by number
	// CommitPulls is the JSON array GET /repos/{o}/{r}/commits/{sha}/pulls answers, by sha.
	CommitPulls map[string]string
	Deployments []*Deployment
	Issues      []*Issue
	PerPage     int
	nextID      int64
}

// Deployment is a created deployment with the states it was moved through.
type Deployment struct {
	ID          int64  `json:"id"`
	Ref         string `json:"ref"`
	Environment string `json:"environment"`
	Description string `json:"description"`
	States      []string
	LogURLs     []string
}

// Issue is an opened issue; its comments are in Comments under its number.
type Issue struct {
	Number  int      `json:"number"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	State   string   `json:"state"`
	User    User     `json:"user"`
	HTMLURL string   `json:"html_url"`
	Labels  []string `json:"-"`
}

// Response is a scripted reply.
type Response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// New starts a server; it stops with the test.
func New(t testing.TB, token string) *Server {
	s := &Server{Login: "cdkbot[bot]", Comments: map[int][]*Comment{}, Fail: map[string][]Response{}, Token: token, PerPage: 100, nextID: 1000,
		Pulls: map[int]string{}, CommitPulls: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Add stores a comment as written by login.
func (s *Server) Add(issue int, login, body string) *Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c := &Comment{ID: s.nextID, NodeID: fmt.Sprintf("IC_%d", s.nextID), Body: body, User: User{login}, HTMLURL: fmt.Sprintf("https://github.test/c/%d", s.nextID)}
	s.Comments[issue] = append(s.Comments[issue], c)
	return c
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := r.Method + " " + r.URL.Path
	call := key
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.RawQuery
	}
	s.Calls = append(s.Calls, call)
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	if script := s.Fail[key]; len(script) > 0 {
		s.Fail[key] = script[1:]
		for k, v := range script[0].Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(script[0].Status)
		fmt.Fprint(w, script[0].Body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 5 && parts[3] == "pulls" && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(parts[4])
		if pr, ok := s.Pulls[n]; ok {
			fmt.Fprint(w, pr)
			return
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	case len(parts) == 6 && parts[3] == "commits" && parts[5] == "pulls" && r.Method == http.MethodGet:
		if prs, ok := s.CommitPulls[parts[4]]; ok {
			fmt.Fprint(w, prs)
			return
		}
		fmt.Fprint(w, "[]")
	case len(parts) == 4 && parts[3] == "deployments" && r.Method == http.MethodPost:
		var d Deployment
		json.NewDecoder(r.Body).Decode(&d)
		s.nextID++
		d.ID = s.nextID
		s.Deployments = append(s.Deployments, &d)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(d)
	case len(parts) == 6 && parts[3] == "deployments" && parts[5] == "statuses" && r.Method == http.MethodPost:
		id, _ := strconv.ParseInt(parts[4], 10, 64)
		var st struct {
			State  string `json:"state"`
			LogURL string `json:"log_url"`
		}
		json.NewDecoder(r.Body).Decode(&st)
		for _, d := range s.Deployments {
			if d.ID == id {
				d.States, d.LogURLs = append(d.States, st.State), append(d.LogURLs, st.LogURL)
				w.WriteHeader(http.StatusCreated)
				fmt.Fprintf(w, `{"id":%d,"state":%q}`, id*10+int64(len(d.States)), st.State)
				return
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	case len(parts) == 4 && parts[3] == "issues" && r.Method == http.MethodGet:
		want := r.URL.Query().Get("labels")
		out := []map[string]any{}
		for _, is := range s.Issues {
			if is.State == r.URL.Query().Get("state") && (want == "" || slices.Contains(is.Labels, want)) {
				out = append(out, map[string]any{"number": is.Number, "title": is.Title, "state": is.State, "user": is.User, "html_url": is.HTMLURL})
			}
		}
		json.NewEncoder(w).Encode(out)
	case len(parts) == 4 && parts[3] == "issues" && r.Method == http.MethodPost:
		var in struct {
			Title, Body string
			Labels      []string
		}
		json.NewDecoder(r.Body).Decode(&in)
		is := &Issue{Number: 500 + len(s.Issues), Title: in.Title, Body: in.Body, State: "open", User: User{s.Login}, Labels: in.Labels}
		is.HTMLURL = fmt.Sprintf("https://github.test/issues/%d", is.Number)
		s.Issues = append(s.Issues, is)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(is)
	case key == "GET /user":
		json.NewEncoder(w).Encode(User{s.Login})
	case key == "POST /graphql":
		var q struct {
			Variables map[string]string `json:"variables"`
		}
		json.NewDecoder(r.Body).Decode(&q)
		for _, cs := range s.Comments {
			for _, c := range cs {
				if c.NodeID == q.Variables["id"] {
					c.Minimized = true
				}
			}
		}
		fmt.Fprint(w, `{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}}}`)
	case len(parts) == 6 && parts[3] == "issues" && parts[5] == "comments":
		issue, _ := strconv.Atoi(parts[4])
		if r.Method == http.MethodPost {
			var c Comment
			json.NewDecoder(r.Body).Decode(&c)
			if len(c.Body) > 65536 {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}]}`)
				return
			}
			s.nextID++
			c.ID, c.NodeID, c.User = s.nextID, fmt.Sprintf("IC_%d", s.nextID), User{s.Login}
			c.HTMLURL = fmt.Sprintf("https://github.test/c/%d", c.ID)
			s.Comments[issue] = append(s.Comments[issue], &c)
			w.WriteHeader(http.StatusCreated)
			json.NewEncoder(w).Encode(c)
			return
		}
		all := s.Comments[issue]
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 {
			page = 1
		}
		per := s.PerPage
		start, end := (page-1)*per, page*per
		if start > len(all) {
			start = len(all)
		}
		if end > len(all) {
			end = len(all)
		}
		if end < len(all) {
			next := *r.URL
			q := next.Query()
			q.Set("page", strconv.Itoa(page+1))
			next.RawQuery = q.Encode()
			w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.URL, next.RequestURI()))
		}
		out := all[start:end]
		if out == nil {
			out = []*Comment{}
		}
		json.NewEncoder(w).Encode(out)
	case len(parts) == 6 && parts[3] == "issues" && parts[4] == "comments" && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(parts[5], 10, 64)
		var in Comment
		json.NewDecoder(r.Body).Decode(&in)
		for _, cs := range s.Comments {
			for _, c := range cs {
				if c.ID == id {
					c.Body = in.Body
					json.NewEncoder(w).Encode(c)
					return
				}
			}
		}
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	default:
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

// CallsSince returns the calls after the first n.
func (s *Server) CallsSince(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Calls[n:]...)
}
