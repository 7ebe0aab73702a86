package cfndiff

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/resourcespec"
)

// Security is what a template change does to permissions: IAM statements and managed policy
// attachments granted or revoked, security-group rules opened or closed, and IAM Identity
// Center objects added or removed.
type Security struct {
	StatementsAdded, StatementsRemoved               []Statement
	ManagedPoliciesAdded, ManagedPoliciesRemoved     []ManagedPolicyAttachment
	RulesAdded, RulesRemoved                         []SecurityGroupRule
	SSOPermissionSetsAdded, SSOPermissionSetsRemoved []*cfn.Object
	SSOAssignmentsAdded, SSOAssignmentsRemoved       []*cfn.Object
	SSOACAConfigsAdded, SSOACAConfigsRemoved         []*cfn.Object
}

// Broadened is true when the change grants more than before: an allow statement or a managed
// policy or an SSO grant added, a deny (or NOT-) statement removed, or a network rule added.
func (s *Security) Broadened() bool {
	for _, st := range s.StatementsAdded {
		if !st.IsNegative() {
			return true
		}
	}
	for _, st := range s.StatementsRemoved {
		if st.IsNegative() {
			return true
		}
	}
	return len(s.ManagedPoliciesAdded) > 0 || len(s.SSOPermissionSetsAdded) > 0 || len(s.SSOAssignmentsAdded) > 0 ||
		len(s.SSOACAConfigsAdded) > 0 || len(s.RulesAdded) > 0
}

// AnyChanges is true when any permission-related object was added or removed.
func (s *Security) AnyChanges() bool {
	return len(s.StatementsAdded)+len(s.StatementsRemoved)+len(s.ManagedPoliciesAdded)+len(s.ManagedPoliciesRemoved)+
		len(s.RulesAdded)+len(s.RulesRemoved)+len(s.SSOPermissionSetsAdded)+len(s.SSOPermissionSetsRemoved)+
		len(s.SSOAssignmentsAdded)+len(s.SSOAssignmentsRemoved)+len(s.SSOACAConfigsAdded)+len(s.SSOACAConfigsRemoved) > 0
}

// Statement is one IAM policy statement with intrinsics rendered ("${Role.Arn}"). A statement
// that is itself an intrinsic (an Fn::If choosing a statement) cannot be analysed: Unparseable
// then holds its rendering.
type Statement struct {
	Sid                            string
	HasSid                         bool
	Effect                         string // Allow, Deny or Unknown
	Resources, Actions, Principals Targets
	Condition                      any
	HasCondition                   bool
	Unparseable                    string
}

// Targets are a statement's resources, actions or principals; Not marks NotResource etc.
type Targets struct {
	Not    bool
	Values []string // sorted
}

// IsNegative is true for statements that restrict: a Deny, or an Allow with a NOT- element.
func (s Statement) IsNegative() bool {
	not := s.Actions.Not || s.Principals.Not || s.Resources.Not
	if s.Effect == "Allow" {
		return not
	}
	return !not
}

func (s Statement) equal(o Statement) bool {
	return s.Sid == o.Sid && s.HasSid == o.HasSid && s.Effect == o.Effect && s.Unparseable == o.Unparseable &&
		s.Resources.equal(o.Resources) && s.Actions.equal(o.Actions) && s.Principals.equal(o.Principals) &&
		s.HasCondition == o.HasCondition && strictEqual(s.Condition, o.Condition)
}

func (t Targets) equal(o Targets) bool {
	if t.Not != o.Not || len(t.Values) != len(o.Values) {
		return false
	}
	for i := range t.Values {
		if t.Values[i] != o.Values[i] {
			return false
		}
	}
	return true
}

// replaceEmpty and replaceStar give statements their implicit subject: an identity policy
// applies to its identity, a resource policy to its resource.
func (t *Targets) replaceEmpty(v string) {
	if len(t.Values) == 0 {
		t.Values = append(t.Values, v)
	}
}

func (t *Targets) replaceStar(v string) {
	for i, x := range t.Values {
		if x == "*" {
			t.Values[i] = v
		}
	}
	sort.Strings(t.Values)
}

// ManagedPolicyAttachment is a managed policy attached to an identity.
type ManagedPolicyAttachment struct {
	IdentityARN      string
	ManagedPolicyARN string
}

// SecurityGroupRule is one ingress or egress rule, inline or standalone.
type SecurityGroupRule struct {
	Direction  string // ingress | egress
	GroupID    string
	IPProtocol string
	FromPort   any // as written; nil when absent
	ToPort     any
	Peer       *RulePeer
}

// RulePeer is the other side of a rule.
type RulePeer struct {
	Kind  string // cidr-ip | security-group | prefix-list
	Value string
}

// equal compares rules as the reference does, group included: a rule moved from one group to
// another is a removal plus an addition, since it opens a different group. The group is compared
// by identity rather than by spelling: the inline rules of Sg, {"Ref": "Sg"} and
// {"Fn::GetAtt": ["Sg", "GroupId"]} all name the group Sg.
func (r SecurityGroupRule) equal(o SecurityGroupRule) bool {
	if groupName(r.GroupID) != groupName(o.GroupID) {
		return false
	}
	if r.IPProtocol != o.IPProtocol || !portEqual(r.FromPort, o.FromPort) || !portEqual(r.ToPort, o.ToPort) {
		return false
	}
	if (r.Peer == nil) != (o.Peer == nil) {
		return false
	}
	return r.Peer == nil || *r.Peer == *o.Peer
}

func portEqual(a, b any) bool { return strictEqual(a, b) }

// securityChanges extracts permissions from the changed resources, driven by the scrutiny
// classes of the resource specification.
func securityChanges(changes []*ResourceChange, spec *resourcespec.Spec) Security {
	var st diffable[Statement]
	var mp diffable[ManagedPolicyAttachment]
	var ingress, egress diffable[SecurityGroupRule]
	var ps, asg, aca diffable[*cfn.Object]

	readProperty := func(logicalID, typ string, scrutiny resourcespec.Scrutiny, oldV, newV any, oldOK, newOK bool) {
		switch scrutiny {
		case resourcespec.InlineIdentityPolicies:
			st.old = append(st.old, readIdentityPolicies(oldV, oldOK, logicalID)...)
			st.new = append(st.new, readIdentityPolicies(newV, newOK, logicalID)...)
		case resourcespec.InlineResourcePolicy:
			read := readResourceStatements
			if typ == "AWS::SSO::PermissionSet" {
				read = readPermissionSetInlinePolicy
			}
			st.old = append(st.old, read(oldV, oldOK, logicalID)...)
			st.new = append(st.new, read(newV, newOK, logicalID)...)
		case resourcespec.ManagedPolicies:
			mp.old = append(mp.old, readManagedPolicies(oldV, oldOK, logicalID)...)
			mp.new = append(mp.new, readManagedPolicies(newV, newOK, logicalID)...)
		case resourcespec.IngressRules:
			ingress.old = append(ingress.old, readInlineRules(oldV, logicalID, "ingress")...)
			ingress.new = append(ingress.new, readInlineRules(newV, logicalID, "ingress")...)
		case resourcespec.EgressRules:
			egress.old = append(egress.old, readInlineRules(oldV, logicalID, "egress")...)
			egress.new = append(egress.new, readInlineRules(newV, logicalID, "egress")...)
		}
	}
	readResource := func(logicalID string, scrutiny resourcespec.Scrutiny, oldP, newP *cfn.Object) {
		switch scrutiny {
		case resourcespec.IdentityPolicyResource:
			st.old = append(st.old, readIdentityPolicyResource(oldP)...)
			st.new = append(st.new, readIdentityPolicyResource(newP)...)
		case resourcespec.ResourcePolicyResource:
			st.old = append(st.old, readResourcePolicyResource(oldP)...)
			st.new = append(st.new, readResourcePolicyResource(newP)...)
		case resourcespec.LambdaPermission:
			st.old = append(st.old, readLambdaPermission(oldP)...)
			st.new = append(st.new, readLambdaPermission(newP)...)
		case resourcespec.IngressRuleResource:
			ingress.old = append(ingress.old, readRuleResource(oldP, "ingress")...)
			ingress.new = append(ingress.new, readRuleResource(newP, "ingress")...)
		case resourcespec.EgressRuleResource:
			egress.old = append(egress.old, readRuleResource(oldP, "egress")...)
			egress.new = append(egress.new, readRuleResource(newP, "egress")...)
		case resourcespec.SsoPermissionSet:
			ps.old = append(ps.old, readSSO(oldP, logicalID, ssoPermissionSetFields)...)
			ps.new = append(ps.new, readSSO(newP, logicalID, ssoPermissionSetFields)...)
		case resourcespec.SsoAssignmentResource:
			asg.old = append(asg.old, readSSO(oldP, logicalID, ssoAssignmentFields)...)
			asg.new = append(asg.new, readSSO(newP, logicalID, ssoAssignmentFields)...)
		case resourcespec.SsoInstanceACAConfigResource:
			aca.old = append(aca.old, readSSO(oldP, logicalID, ssoACAFields)...)
			aca.new = append(aca.new, readSSO(newP, logicalID, ssoACAFields)...)
		}
	}

	for _, rc := range changes {
		if !rc.differs() {
			continue
		}
		oldP, newP := rc.oldProperties(), rc.newProperties()
		if rc.typeChanged() {
			if t := spec.Type(rc.OldType); t != nil && t.Scrutiny != "" {
				readResource(rc.LogicalID, t.Scrutiny, oldP, nil)
			}
			if t := spec.Type(rc.NewType); t != nil && t.Scrutiny != "" {
				readResource(rc.LogicalID, t.Scrutiny, nil, newP)
			}
			continue
		}
		typ := rc.OldType
		if typ == "" {
			typ = rc.NewType
		}
		t := spec.Type(typ)
		if t == nil {
			continue
		}
		for _, p := range t.Properties {
			if p.Scrutiny == "" {
				continue
			}
			oldV, oldOK := oldP.Get(p.Name)
			newV, newOK := newP.Get(p.Name)
			readProperty(rc.LogicalID, typ, p.Scrutiny, oldV, newV, oldOK, newOK)
		}
		if t.Scrutiny != "" {
			readResource(rc.LogicalID, t.Scrutiny, oldP, newP)
		}
	}

	var s Security
	s.StatementsAdded, s.StatementsRemoved = st.diff(Statement.equal)
	s.ManagedPoliciesAdded, s.ManagedPoliciesRemoved = mp.diff(func(a, b ManagedPolicyAttachment) bool { return a == b })
	inAdded, inRemoved := ingress.diff(SecurityGroupRule.equal)
	outAdded, outRemoved := egress.diff(SecurityGroupRule.equal)
	s.RulesAdded = append(inAdded, outAdded...)
	s.RulesRemoved = append(inRemoved, outRemoved...)
	objEqual := func(a, b *cfn.Object) bool { return strictEqual(a, b) }
	s.SSOPermissionSetsAdded, s.SSOPermissionSetsRemoved = ps.diff(objEqual)
	s.SSOAssignmentsAdded, s.SSOAssignmentsRemoved = asg.diff(objEqual)
	s.SSOACAConfigsAdded, s.SSOACAConfigsRemoved = aca.diff(objEqual)
	return s
}

// diffable collects old and new elements and reports what only one side has.
type diffable[T any] struct{ old, new []T }

func (d diffable[T]) diff(eq func(T, T) bool) (added, removed []T) {
	minus := func(xs, ys []T) []T {
		var out []T
	next:
		for _, x := range xs {
			for _, y := range ys {
				if eq(x, y) {
					continue next
				}
			}
			out = append(out, x)
		}
		return out
	}
	return minus(d.new, d.old), minus(d.old, d.new)
}

func render(v any, present bool) (any, bool) {
	if !present {
		return nil, false
	}
	return renderIntrinsics(v)
}

// parseStatements reads a Statement value (one statement or a list).
func parseStatements(x any, present bool) []Statement {
	if !present {
		return nil
	}
	list, ok := x.([]any)
	if !ok {
		list = []any{x}
	}
	out := make([]Statement, 0, len(list))
	for _, s := range list {
		out = append(out, newStatement(s))
	}
	return out
}

func newStatement(x any) Statement {
	o, ok := x.(*cfn.Object)
	if !ok {
		text, isString := x.(string)
		if !isString {
			text = cfn.JSON(x)
		}
		return Statement{Effect: "Unknown", Unparseable: text}
	}
	s := Statement{Effect: "Unknown"}
	if sid, ok := o.Get("Sid"); ok {
		s.Sid, s.HasSid = sid.(string)
	}
	if e, _ := o.Get("Effect"); e == "Allow" || e == "Deny" {
		s.Effect = e.(string)
	}
	s.Resources = newTargets(o, "Resource", "NotResource")
	s.Actions = newTargets(o, "Action", "NotAction")
	s.Principals = newTargets(o, "Principal", "NotPrincipal")
	s.Condition, s.HasCondition = o.Get("Condition")
	return s
}

func newTargets(o *cfn.Object, positive, negative string) Targets {
	var t Targets
	if v, ok := o.Get(negative); ok {
		t = Targets{Not: true, Values: forceListOfStrings(v)}
	} else {
		v, _ := o.Get(positive)
		t = Targets{Values: forceListOfStrings(v)}
	}
	sort.Strings(t.Values)
	return t
}

// forceListOfStrings flattens a policy element: "a" → [a]; [a, b] → [a, b];
// {"AWS": [x, y]} → ["AWS:x", "AWS:y"].
func forceListOfStrings(x any) []string {
	switch t := x.(type) {
	case string:
		return []string{t}
	case nil:
		return []string{}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			out = append(out, strings.Join(forceListOfStrings(e), ","))
		}
		return out
	case *cfn.Object:
		var out []string
		for _, k := range t.Keys() {
			v, _ := t.Get(k)
			for _, s := range forceListOfStrings(v) {
				out = append(out, k+":"+s)
			}
		}
		if out == nil {
			out = []string{}
		}
		return out
	}
	return []string{jsString(x)}
}

func defaultPrincipal(principal string, sts []Statement) []Statement {
	for i := range sts {
		sts[i].Principals.replaceEmpty(principal)
		sts[i].Principals.replaceStar(principal)
	}
	return sts
}

func defaultResource(resource string, sts []Statement) []Statement {
	for i := range sts {
		sts[i].Resources.replaceEmpty(resource)
		sts[i].Resources.replaceStar(resource)
	}
	return sts
}

func readIdentityPolicies(policies any, present bool, logicalID string) []Statement {
	list, ok := policies.([]any)
	if !present || !ok {
		return nil
	}
	principal := "AWS:${" + logicalID + "}"
	var out []Statement
	for _, policy := range list {
		unparsed := policy
		if doc := cfn.AsObject(get(policy, "PolicyDocument")); doc != nil {
			if stmts, ok := doc.Get("Statement"); ok && truthy(stmts) {
				unparsed = stmts
			}
		}
		r, ok := renderIntrinsics(unparsed)
		out = append(out, defaultPrincipal(principal, parseStatements(r, ok))...)
	}
	return out
}

func readIdentityPolicyResource(props *cfn.Object) []Statement {
	if props == nil {
		return nil
	}
	rendered, _ := renderIntrinsics(props)
	p := cfn.AsObject(rendered)
	var principals []any
	for _, k := range []string{"Groups", "Users", "Roles"} {
		switch v := get(p, k).(type) {
		case []any:
			principals = append(principals, v...)
		case nil:
		default:
			principals = append(principals, v)
		}
	}
	stmts, ok := cfn.AsObject(get(p, "PolicyDocument")).Get("Statement")
	var out []Statement
	for _, principal := range principals {
		out = append(out, defaultPrincipal("AWS:"+jsString(principal), parseStatements(stmts, ok))...)
	}
	return out
}

func readResourcePolicyResource(props *cfn.Object) []Statement {
	if props == nil {
		return nil
	}
	rendered, _ := renderIntrinsics(props)
	p := cfn.AsObject(rendered)
	var policyKeys, resourceKeys []string
	for _, k := range p.Keys() {
		if strings.Contains(k, "Policy") {
			policyKeys = append(policyKeys, k)
		}
	}
	for _, k := range p.Keys() {
		if !strings.Contains(k, "Policy") && !strings.HasSuffix(k, "Name") {
			resourceKeys = append(resourceKeys, k)
		}
	}
	if len(policyKeys) == 0 {
		return nil
	}
	var resources []any
	if len(resourceKeys) == 1 {
		v, _ := p.Get(resourceKeys[0])
		if list, ok := v.([]any); ok {
			resources = list
		} else {
			resources = []any{v}
		}
	} else {
		resources = []any{"???"}
	}
	stmts, ok := cfn.AsObject(get(p, policyKeys[0])).Get("Statement")
	var out []Statement
	for _, r := range resources {
		out = append(out, defaultResource(jsString(r), parseStatements(stmts, ok))...)
	}
	return out
}

func readResourceStatements(policy any, present bool, logicalID string) []Statement {
	if !present {
		return nil
	}
	stmts, ok := cfn.AsObject(policy).Get("Statement")
	r, ok := render(stmts, ok)
	return defaultResource("${"+logicalID+".Arn}", parseStatements(r, ok))
}

func readPermissionSetInlinePolicy(policy any, present bool, logicalID string) []Statement {
	if !present {
		return nil
	}
	stmts, ok := cfn.AsObject(policy).Get("Statement")
	r, ok := render(stmts, ok)
	sts := parseStatements(r, ok)
	defaultResource("${"+logicalID+".Arn}", sts)
	return defaultPrincipal("AWS:${"+logicalID+"}", sts)
}

func readManagedPolicies(arns any, present bool, logicalID string) []ManagedPolicyAttachment {
	if !present || !truthy(arns) {
		return nil
	}
	identity := "${" + logicalID + "}"
	r, _ := renderIntrinsics(arns)
	if s, ok := r.(string); ok {
		return []ManagedPolicyAttachment{{identity, s}}
	}
	list, _ := r.([]any)
	out := make([]ManagedPolicyAttachment, 0, len(list))
	for _, a := range list {
		out = append(out, ManagedPolicyAttachment{identity, jsString(a)})
	}
	return out
}

var twelveDigits = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{12}$`) })

// readLambdaPermission expresses an AWS::Lambda::Permission as the statement it adds to the
// function's resource policy.
func readLambdaPermission(props *cfn.Object) []Statement {
	if props == nil {
		return nil
	}
	rendered, _ := renderIntrinsics(props)
	x := cfn.AsObject(rendered)
	st := cfn.NewObject()
	st.Set("Effect", "Allow")
	if v, ok := x.Get("Action"); ok {
		st.Set("Action", v)
	}
	if v, ok := x.Get("FunctionName"); ok {
		st.Set("Resource", v)
	}
	if p, ok := x.Get("Principal"); ok {
		switch {
		case p == "*":
			st.Set("Principal", "*")
		case twelveDigits().MatchString(jsString(p)):
			o := cfn.NewObject()
			o.Set("AWS", "arn:aws:iam::"+jsString(p)+":root")
			st.Set("Principal", o)
		default:
			o := cfn.NewObject()
			o.Set("Service", p)
			st.Set("Principal", o)
		}
	}
	var cond *cfn.Object
	setCond := func(op, key string, v any) {
		if cond == nil {
			cond = cfn.NewObject()
			st.Set("Condition", cond)
		}
		o := cfn.NewObject()
		o.Set(key, v)
		cond.Set(op, o)
	}
	if v, ok := x.Get("SourceArn"); ok {
		setCond("ArnLike", "AWS:SourceArn", v)
	}
	if v, ok := x.Get("SourceAccount"); ok {
		setCond("StringEquals", "AWS:SourceAccount", v)
	}
	if v, ok := x.Get("EventSourceToken"); ok {
		setCond("StringEquals", "lambda:EventSourceToken", v)
	}
	return []Statement{newStatement(st)}
}

func readInlineRules(rules any, logicalID, direction string) []SecurityGroupRule {
	list, ok := rules.([]any)
	if !ok {
		return nil
	}
	ref := "${" + logicalID + ".GroupId}"
	var out []SecurityGroupRule
	for _, r := range list {
		rendered, _ := renderIntrinsics(r)
		if o, ok := rendered.(*cfn.Object); ok {
			out = append(out, newRule(o, ref, direction))
		}
	}
	return out
}

func readRuleResource(props *cfn.Object, direction string) []SecurityGroupRule {
	if props == nil {
		return nil
	}
	rendered, _ := renderIntrinsics(props)
	return []SecurityGroupRule{newRule(cfn.AsObject(rendered), "", direction)}
}

func newRule(o *cfn.Object, groupRef, direction string) SecurityGroupRule {
	r := SecurityGroupRule{Direction: direction, IPProtocol: "*unknown*", GroupID: "*unknown*"}
	if p, ok := o.Get("IpProtocol"); ok && p != nil && jsString(p) != "" {
		r.IPProtocol = jsString(p)
	}
	r.FromPort, _ = o.Get("FromPort")
	r.ToPort, _ = o.Get("ToPort")
	if g, ok := o.Get("GroupId"); ok && truthy(g) {
		r.GroupID = jsString(g)
	} else if groupRef != "" {
		r.GroupID = groupRef
	}
	for _, peer := range []struct {
		kind string
		keys []string
	}{
		{"cidr-ip", []string{"CidrIp", "CidrIpv6"}},
		{"security-group", []string{"DestinationSecurityGroupId", "SourceSecurityGroupId"}},
		{"prefix-list", []string{"DestinationPrefixListId", "SourcePrefixListId"}},
	} {
		for _, k := range peer.keys {
			if v, ok := o.Get(k); ok {
				r.Peer = &RulePeer{Kind: peer.kind, Value: jsString(v)}
				return r
			}
		}
	}
	return r
}

// SSO objects are reported as the reference models them: a few properties renamed.
type ssoField struct{ from, to string }

var (
	ssoPermissionSetFields = []ssoField{{"Name", "name"}, {"InstanceArn", "ssoInstanceArn"},
		{"CustomerManagedPolicyReferences", "ssoCustomerManagedPolicyReferences"},
		{"PermissionsBoundary", "ssoPermissionsBoundary"}}
	ssoAssignmentFields = []ssoField{{"InstanceArn", "ssoInstanceArn"}, {"PermissionSetArn", "permissionSetArn"},
		{"PrincipalId", "principalId"}, {"PrincipalType", "principalType"},
		{"TargetId", "targetId"}, {"TargetType", "targetType"}}
	ssoACAFields = []ssoField{{"InstanceArn", "ssoInstanceArn"}, {"AccessControlAttributes", "accessControlAttributes"}}
)

func readSSO(props *cfn.Object, logicalID string, fields []ssoField) []*cfn.Object {
	if props == nil {
		return nil
	}
	rendered, _ := renderIntrinsics(props)
	p := cfn.AsObject(rendered)
	out := cfn.NewObject()
	out.Set("cfnLogicalId", "${"+logicalID+"}")
	for _, f := range fields {
		if v, ok := p.Get(f.from); ok {
			out.Set(f.to, v)
		}
	}
	return []*cfn.Object{out}
}

func get(v any, key string) any {
	x, _ := cfn.AsObject(v).Get(key)
	return x
}

// truthy is JavaScript truthiness for template values.
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case cfn.Number:
		f, ok := t.Float()
		return ok && f != 0
	}
	return true
}

// strictEqual is structural equality without coercions; object key order does not matter.
func strictEqual(a, b any) bool {
	switch x := a.(type) {
	case *cfn.Object:
		y, ok := b.(*cfn.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.Keys() {
			xv, _ := x.Get(k)
			yv, ok := y.Get(k)
			if !ok || !strictEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !strictEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case cfn.Number:
		y, ok := b.(cfn.Number)
		return ok && numbersEqual(x, y)
	}
	return a == b
}
