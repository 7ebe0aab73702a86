package cfndiff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Severity ranks how much a permission change opens up.
type Severity uint8

// Severities, least first.
const (
	Low Severity = iota
	Medium
	High
	Critical
)

var severityNames = [...]string{"low", "medium", "high", "critical"}

func (s Severity) String() string { return severityNames[s] }

// ParseSeverity reads a severity name ("" is high, the default gate threshold).
func ParseSeverity(s string) (Severity, error) {
	if s == "" {
		return High, nil
	}
	for i, n := range severityNames {
		if strings.EqualFold(s, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("severity %q: use low, medium, high or critical", s)
}

// Finding is one way a change broadens permissions, with how much.
type Finding struct {
	Severity Severity `json:"-"`
	Level    string   `json:"severity"`
	What     string   `json:"what"` // "opens port 22 to the internet (ServiceSg)"
}

// webPorts may face the internet by design.
var webPorts = map[int]bool{80: true, 443: true}

// Findings classifies what the change grants, worst first: critical — ingress from anywhere on
// a port other than 80/443, any action on any resource, a public principal, AdministratorAccess;
// high — a service-wide action (s3:*), any resource, an account principal, a removed deny, a
// broad managed policy, an SSO grant; medium — the web ports open to the internet, another
// managed policy; low — a grant scoped to named actions and resources, ingress from a network,
// and a grant on any resource of only actions that cannot be scoped (unscopable.tsv).
func (s *Security) Findings() []Finding {
	var out []Finding
	add := func(sev Severity, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Level: sev.String(), What: fmt.Sprintf(format, args...)})
	}
	for _, r := range s.RulesAdded {
		r.GroupID = groupName(r.GroupID)
		open := r.Peer != nil && r.Peer.Kind == "cidr-ip" && (r.Peer.Value == "0.0.0.0/0" || r.Peer.Value == "::/0")
		ports := portText(r)
		switch {
		case r.Direction != "ingress":
			add(Low, "allows egress to %s on %s (%s)", peerText(r.Peer), ports, r.GroupID)
		case open && !onlyWebPorts(r):
			add(Critical, "opens %s to the internet (%s)", ports, r.GroupID)
		case open:
			add(Medium, "opens %s to the internet (%s)", ports, r.GroupID)
		default:
			add(Low, "allows ingress from %s on %s (%s)", peerText(r.Peer), ports, r.GroupID)
		}
	}
	for _, st := range s.StatementsAdded {
		if st.IsNegative() || st.Unparseable != "" {
			if st.Unparseable != "" {
				add(High, "adds a policy statement cdkbot cannot read: %s", st.Unparseable)
			}
			continue
		}
		actions, resources := strings.Join(st.Actions.Values, ", "), strings.Join(st.Resources.Values, ", ")
		anyAction, anyResource := contains(st.Actions.Values, "*"), contains(st.Resources.Values, "*")
		switch {
		case contains(st.Principals.Values, "*") || contains(st.Principals.Values, "AWS:*"):
			add(Critical, "grants %s to anyone (principal *)", actions)
		case anyAction && anyResource:
			add(Critical, "grants every action on every resource (* on *)")
		case anyAction || serviceWide(st.Actions.Values) != "":
			add(High, "grants %s on %s", or(serviceWide(st.Actions.Values), "*"), resources)
		case anyResource && allUnscopable(st.Actions.Values) && accountPrincipal(st.Principals.Values) == "":
			add(Low, "grants %s on every resource (*): %s", actions, unscopableReason)
		case anyResource:
			add(High, "grants %s on every resource (*)", actions)
		case accountPrincipal(st.Principals.Values) != "":
			add(High, "grants %s to account %s", actions, accountPrincipal(st.Principals.Values))
		default:
			add(Low, "grants %s on %s", actions, resources)
		}
	}
	for _, st := range s.StatementsRemoved {
		if st.IsNegative() {
			add(High, "removes a restriction (%s %s)", st.Effect, strings.Join(st.Actions.Values, ", "))
		}
	}
	for _, m := range s.ManagedPoliciesAdded {
		switch name := m.ManagedPolicyARN[strings.LastIndex(m.ManagedPolicyARN, "/")+1:]; {
		case name == "AdministratorAccess":
			add(Critical, "attaches AdministratorAccess to %s", m.IdentityARN)
		case name == "PowerUserAccess" || name == "IAMFullAccess" || strings.HasSuffix(name, "FullAccess"):
			add(High, "attaches %s to %s", name, m.IdentityARN)
		default:
			add(Medium, "attaches %s to %s", name, m.IdentityARN)
		}
	}
	if n := len(s.SSOPermissionSetsAdded) + len(s.SSOAssignmentsAdded) + len(s.SSOACAConfigsAdded); n > 0 {
		add(High, "adds %d IAM Identity Center grant(s)", n)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// Worst is the most severe finding.
func (s *Security) Worst() (Finding, bool) {
	f := s.Findings()
	if len(f) == 0 {
		return Finding{}, false
	}
	return f[0], true
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// serviceWide returns the first "service:*" action.
func serviceWide(actions []string) string {
	for _, a := range actions {
		if strings.HasSuffix(a, ":*") {
			return a
		}
	}
	return ""
}

// accountPrincipal returns an account-wide principal (arn:aws:iam::ACCOUNT:root, or an id).
func accountPrincipal(principals []string) string {
	for _, p := range principals {
		v := strings.TrimPrefix(p, "AWS:")
		if strings.HasSuffix(v, ":root") {
			return v
		}
		if len(v) == 12 && strings.Trim(v, "0123456789") == "" {
			return v
		}
	}
	return ""
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// groupName shows a group reference as its logical id: "${Sg.GroupId}" and "${Sg}" → "Sg". It is
// also a rule's group identity (SecurityGroupRule.equal): a Ref to a security group is its id.
func groupName(id string) string {
	if strings.HasPrefix(id, "${") && strings.HasSuffix(id, "}") {
		id = strings.TrimSuffix(strings.TrimSuffix(id[2:], "}"), ".GroupId")
	}
	return id
}

func peerText(p *RulePeer) string {
	if p == nil {
		return "?"
	}
	return p.Value
}

func port(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return 0, false
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	case fmt.Stringer:
		n, err := strconv.Atoi(x.String())
		return n, err == nil
	case float64:
		return int(x), true
	case int:
		return x, true
	}
	n, err := strconv.Atoi(fmt.Sprint(v))
	return n, err == nil
}

// allTraffic is true for rules of every protocol (-1) or without ports.
func allTraffic(r SecurityGroupRule) bool {
	_, fromOK := port(r.FromPort)
	from, _ := port(r.FromPort)
	to, _ := port(r.ToPort)
	return r.IPProtocol == "-1" || r.IPProtocol == "all" || !fromOK || (from <= 0 && to >= 65535) || from == -1
}

func onlyWebPorts(r SecurityGroupRule) bool {
	if allTraffic(r) {
		return false
	}
	from, _ := port(r.FromPort)
	to, _ := port(r.ToPort)
	for p := from; p <= to; p++ {
		if !webPorts[p] {
			return false
		}
	}
	return true
}

func portText(r SecurityGroupRule) string {
	if allTraffic(r) {
		return "all ports"
	}
	from, _ := port(r.FromPort)
	to, _ := port(r.ToPort)
	if from == to {
		return fmt.Sprintf("port %d", from)
	}
	return fmt.Sprintf("ports %d-%d", from, to)
}
