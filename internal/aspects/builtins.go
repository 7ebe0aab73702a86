package aspects

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// builtin describes one aspect users can name in the configuration.
type builtin struct {
	mutating bool
	options  func(file string, with yaml.Node) (any, error)
	// visit checks or changes one resource node; it returns violation messages (read-only
	// rules) or change descriptions (mutations).
	visit func(rc *runContext, opts any, n *Node) []string
}

var builtins = map[string]builtin{
	"tags":                      {mutating: true, options: tagsOptions, visit: applyTags},
	"bucket-access-logging":     {mutating: true, options: noOptions, visit: addAccessLogging},
	"require-tags":              {options: requireTagsOptions, visit: checkTags},
	"require-encryption":        {options: noOptions, visit: checkEncryption},
	"require-bucket-versioning": {options: noOptions, visit: checkVersioning},
	"block-public-buckets":      {options: noOptions, visit: checkPublicBuckets},
	"no-wildcard-iam":           {options: noOptions, visit: checkWildcardIAM},
	"no-open-ingress":           {options: openIngressOptions, visit: checkOpenIngress},
	"retain-stateful":           {options: noOptions, visit: checkRetainStateful},
}

func noOptions(file string, with yaml.Node) (any, error) {
	var none struct{}
	return nil, decodeOptions(file, with, &none)
}

type tagsOpts struct {
	Tags map[string]string `yaml:"tags"`
}

func tagsOptions(file string, with yaml.Node) (any, error) {
	var o tagsOpts
	if err := decodeOptions(file, with, &o); err != nil {
		return nil, err
	}
	if len(o.Tags) == 0 {
		return nil, fmt.Errorf("with: tags: give at least one tag, e.g. with: { tags: { team: core } }")
	}
	return o, nil
}

type requireTagsOpts struct {
	Keys []string `yaml:"keys"`
}

func requireTagsOptions(file string, with yaml.Node) (any, error) {
	var o requireTagsOpts
	if err := decodeOptions(file, with, &o); err != nil {
		return nil, err
	}
	if len(o.Keys) == 0 {
		return nil, fmt.Errorf("with: keys: list the required tag keys, e.g. with: { keys: [team] }")
	}
	return o, nil
}

// taggable reports whether the resource type has a Tags property.
func taggable(rc *runContext, n *Node) bool {
	_, ok := rc.spec.Type(n.Type()).Property("Tags")
	return ok
}

// tagsOf reads a resource's tags (list of {Key, Value} or a map); ok is false when they are
// computed by an intrinsic and cannot be read.
func tagsOf(n *Node) (map[string]any, bool) {
	out := map[string]any{}
	switch t := get(n.Properties(), "Tags").(type) {
	case nil:
	case []any:
		for _, e := range t {
			k, ok := get(e, "Key").(string)
			if !ok {
				return nil, false
			}
			out[k] = get(e, "Value")
		}
	case *cfn.Object:
		if _, _, intrinsic := cfn.Intrinsic(t); intrinsic {
			return nil, false
		}
		for _, k := range t.Keys() {
			out[k] = get(t, k)
		}
	default:
		return nil, false
	}
	return out, true
}

func applyTags(rc *runContext, opts any, n *Node) []string {
	if n.Resource == nil || !taggable(rc, n) {
		return nil
	}
	want := opts.(tagsOpts).Tags
	have, ok := tagsOf(n)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var changes []string
	for _, k := range keys {
		if cur, ok := have[k]; ok && cur == want[k] {
			continue
		}
		changes = append(changes, fmt.Sprintf("tag %s=%s", k, want[k]))
		switch t := get(n.Properties(), "Tags").(type) {
		case *cfn.Object:
			t.Set(k, want[k])
		default:
			list, _ := t.([]any)
			replaced := false
			for _, e := range list {
				if get(e, "Key") == k {
					cfn.AsObject(e).Set("Value", want[k])
					replaced = true
				}
			}
			if !replaced {
				tag := cfn.NewObject()
				tag.Set("Key", k)
				tag.Set("Value", want[k])
				list = append(list, tag)
			}
			n.Properties().Set("Tags", list)
		}
	}
	if len(changes) > 0 {
		n.Stack.Changed = true
		return []string{"added " + strings.Join(changes, ", ")}
	}
	return nil
}

const accessLogsID = "CdkbotAccessLogsBucket"

// addAccessLogging gives every bucket without logging a destination: one log bucket per stack,
// itself encrypted and private.
func addAccessLogging(rc *runContext, _ any, n *Node) []string {
	if n.Type() != "AWS::S3::Bucket" || n.LogicalID == accessLogsID ||
		n.Properties().Has("LoggingConfiguration") || n.Stack == nil {
		return nil
	}
	resources := cfn.AsObject(get(n.Stack.Template, "Resources"))
	var changes []string
	if !resources.Has(accessLogsID) {
		props, _ := cfn.ParseJSON([]byte(`{"BucketEncryption": {"ServerSideEncryptionConfiguration": ` +
			`[{"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
		  "PublicAccessBlockConfiguration": {"BlockPublicAcls": true, "BlockPublicPolicy": true, ` +
			`"IgnorePublicAcls": true, "RestrictPublicBuckets": true},
		  "VersioningConfiguration": {"Status": "Enabled"}, ` +
			`"OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]}}`))
		logs, err := n.Stack.Node.AddResource("CdkbotAccessLogs", accessLogsID, "AWS::S3::Bucket", cfn.AsObject(props))
		if err != nil {
			rc.errs = append(rc.errs, err)
			return nil
		}
		logs.Resource.Set("DeletionPolicy", "Retain")
		logs.Resource.Set("UpdateReplacePolicy", "Retain")
		changes = append(changes, "added access-log bucket "+accessLogsID+" to the stack")
	}
	dest, _ := cfn.ParseJSON([]byte(`{"DestinationBucketName": {"Ref": "` + accessLogsID + `"}, ` +
		`"LogFilePrefix": "` + n.LogicalID + `/"}`))
	n.SetProperty("LoggingConfiguration", dest)
	return append(changes, "access logging to "+accessLogsID)
}

func checkTags(rc *runContext, opts any, n *Node) []string {
	if n.Resource == nil || !taggable(rc, n) {
		return nil
	}
	have, ok := tagsOf(n)
	if !ok {
		return nil
	}
	var missing []string
	for _, k := range opts.(requireTagsOpts).Keys {
		if _, ok := have[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return []string{"missing tag(s): " + strings.Join(missing, ", ")}
	}
	return nil
}

func isTrue(v any) bool { return v == true || v == "true" }

func checkEncryption(_ *runContext, _ any, n *Node) []string {
	p := n.Properties()
	switch n.Type() {
	case "AWS::S3::Bucket":
		if !p.Has("BucketEncryption") {
			return []string{"bucket has no BucketEncryption configuration"}
		}
	case "AWS::SQS::Queue":
		if !p.Has("KmsMasterKeyId") && get(p, "SqsManagedSseEnabled") == false {
			return []string{"queue encryption is turned off (SqsManagedSseEnabled: false, no KmsMasterKeyId)"}
		}
	case "AWS::SNS::Topic":
		if !p.Has("KmsMasterKeyId") {
			return []string{"topic has no KmsMasterKeyId"}
		}
	case "AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable":
		if !isTrue(get(get(p, "SSESpecification"), "SSEEnabled")) {
			return []string{"table does not enable SSESpecification.SSEEnabled"}
		}
	case "AWS::RDS::DBInstance", "AWS::RDS::DBCluster":
		if !isTrue(get(p, "StorageEncrypted")) && !p.Has("KmsKeyId") {
			return []string{"database storage is not encrypted (StorageEncrypted)"}
		}
	case "AWS::EC2::Volume":
		if !isTrue(get(p, "Encrypted")) {
			return []string{"volume is not encrypted (Encrypted)"}
		}
	}
	return nil
}

func checkVersioning(_ *runContext, _ any, n *Node) []string {
	if n.Type() == "AWS::S3::Bucket" && get(get(n.Properties(), "VersioningConfiguration"), "Status") != "Enabled" {
		return []string{"bucket versioning is not enabled"}
	}
	return nil
}

func checkPublicBuckets(_ *runContext, _ any, n *Node) []string {
	switch n.Type() {
	case "AWS::S3::Bucket":
		block := get(n.Properties(), "PublicAccessBlockConfiguration")
		var open []string
		for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
			if !isTrue(get(block, k)) {
				open = append(open, k)
			}
		}
		if len(open) > 0 {
			return []string{"public access is not fully blocked: " + strings.Join(open, ", ") + " not true"}
		}
	case "AWS::S3::BucketPolicy":
		for _, st := range statements(get(n.Properties(), "PolicyDocument")) {
			if get(st, "Effect") == "Allow" && !cfn.AsObject(st).Has("Condition") && principalIsAnyone(get(st, "Principal")) {
				return []string{"bucket policy allows anyone (Principal \"*\") without a condition"}
			}
		}
	}
	return nil
}

func principalIsAnyone(p any) bool {
	if p == "*" {
		return true
	}
	aws := get(p, "AWS")
	if aws == "*" {
		return true
	}
	list, _ := aws.([]any)
	for _, e := range list {
		if e == "*" {
			return true
		}
	}
	return false
}

func statements(doc any) []any {
	switch s := get(doc, "Statement").(type) {
	case []any:
		return s
	case *cfn.Object:
		return []any{s}
	}
	return nil
}

func asList(v any) []any {
	if list, ok := v.([]any); ok {
		return list
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// checkWildcardIAM flags allow statements granting every action ("*" or "service:*") on every
// resource ("*"), in policies, managed policies and roles' inline policies.
func checkWildcardIAM(_ *runContext, _ any, n *Node) []string {
	var docs []any
	switch n.Type() {
	case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
		docs = append(docs, get(n.Properties(), "PolicyDocument"))
	case "AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group":
		for _, p := range asList(get(n.Properties(), "Policies")) {
			docs = append(docs, get(p, "PolicyDocument"))
		}
	}
	var out []string
	for _, d := range docs {
		for _, st := range statements(d) {
			if get(st, "Effect") != "Allow" {
				continue
			}
			wildResource := false
			for _, r := range asList(get(st, "Resource")) {
				wildResource = wildResource || r == "*"
			}
			for _, a := range asList(get(st, "Action")) {
				if s, ok := a.(string); ok && wildResource && (s == "*" || strings.HasSuffix(s, ":*")) {
					out = append(out, fmt.Sprintf("allows %q on every resource (\"*\")", s))
				}
			}
		}
	}
	return out
}

type openIngressOpts struct {
	// Ports that may face the internet (default 80 and 443).
	Allow []int `yaml:"allow"`
}

func openIngressOptions(file string, with yaml.Node) (any, error) {
	o := openIngressOpts{}
	if err := decodeOptions(file, with, &o); err != nil {
		return nil, err
	}
	if o.Allow == nil {
		o.Allow = []int{80, 443}
	}
	return o, nil
}

// checkOpenIngress refuses security-group ingress from anywhere (0.0.0.0/0, ::/0) on ports other
// than the allowed ones (80 and 443 unless configured), inline or as an ingress resource.
func checkOpenIngress(_ *runContext, opts any, n *Node) []string {
	allowed := map[int]bool{}
	for _, p := range opts.(openIngressOpts).Allow {
		allowed[p] = true
	}
	var rules []any
	switch n.Type() {
	case "AWS::EC2::SecurityGroup":
		rules = asList(get(n.Properties(), "SecurityGroupIngress"))
	case "AWS::EC2::SecurityGroupIngress":
		rules = []any{n.Properties()}
	}
	var out []string
	for _, r := range rules {
		cidr, _ := get(r, "CidrIp").(string)
		if v6, _ := get(r, "CidrIpv6").(string); v6 == "::/0" {
			cidr = v6
		}
		if cidr != "0.0.0.0/0" && cidr != "::/0" {
			continue
		}
		from, fromOK := portNumber(get(r, "FromPort"))
		to, toOK := portNumber(get(r, "ToPort"))
		proto := fmt.Sprint(get(r, "IpProtocol"))
		if proto == "-1" || !fromOK || !toOK || from < 0 {
			out = append(out, fmt.Sprintf("opens every port to the internet (%s)", cidr))
			continue
		}
		for p := from; p <= to; p++ {
			if !allowed[p] {
				what := fmt.Sprintf("port %d", from)
				if to != from {
					what = fmt.Sprintf("ports %d-%d", from, to)
				}
				out = append(out, fmt.Sprintf("opens %s to the internet (%s)", what, cidr))
				break
			}
		}
	}
	return out
}

// portNumber reads a port as written in a template (a number or a numeric string).
func portNumber(v any) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
	return n, v != nil && err == nil
}

// checkRetainStateful requires stateful resources to survive their removal from the template
// and their replacement: DeletionPolicy and UpdateReplacePolicy Retain, RetainExceptOnCreate
// or Snapshot.
func checkRetainStateful(rc *runContext, _ any, n *Node) []string {
	t := rc.spec.Type(n.Type())
	if n.Resource == nil || t == nil || !t.Stateful {
		return nil
	}
	keeps := func(v any) bool { return v == "Retain" || v == "RetainExceptOnCreate" || v == "Snapshot" }
	var out []string
	if !keeps(get(n.Resource, "DeletionPolicy")) {
		out = append(out, fmt.Sprintf("stateful %s is deleted when removed from the stack (DeletionPolicy: %s)",
			n.Type(), policyText(get(n.Resource, "DeletionPolicy"))))
	}
	if !keeps(get(n.Resource, "UpdateReplacePolicy")) {
		out = append(out, fmt.Sprintf("stateful %s is deleted when replaced (UpdateReplacePolicy: %s)",
			n.Type(), policyText(get(n.Resource, "UpdateReplacePolicy"))))
	}
	return out
}

func policyText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "Delete, the default"
}
