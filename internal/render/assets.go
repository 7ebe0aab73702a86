package render

import (
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// assetHash is how CDK names an asset: the SHA-256 of its content, in hexadecimal, in the S3 key
// of a file asset (Lambda Code.S3Key, a bucket deployment's SourceObjectKeys, a nested stack's
// TemplateURL) and the tag of an image asset.
var assetHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9a-f]{64}`) })

// AssetOnly is true when the resource is updated in place and every change it has is an asset's
// hash: new Lambda code, new files for a bucket deployment, a new image, and nothing else. Such
// changes are the churn of every build; views count them per stack instead of listing them
// (asset-changes: show lists them). A replacement, a new or removed resource, a value that
// resolves anew or any other difference is never folded.
func AssetOnly(r *cfndiff.ResourceChange) bool {
	if r.Impact != cfndiff.Update || r.OldType != r.NewType || r.Added() || r.Removed() || len(r.Properties) == 0 {
		return false
	}
	for _, p := range r.Properties {
		resolvesAnew := !p.Changed || len(p.ChangedInputs) > 0 || len(p.ReplacedReferences) > 0
		if resolvesAnew || !p.OldPresent || !p.NewPresent || reflect.DeepEqual(p.Old, p.New) ||
			!hashesOnlyAt(p.Old, p.New, assetKeys[p.Name]) {
			return false
		}
	}
	for _, o := range r.Other {
		// The asset's path in the metadata (aws:asset:path) moves with its hash. Other metadata
		// is not the asset's: AWS::CloudFormation::Init is what an instance runs as root.
		if o.Key != "Metadata" || !assetMetadataOnly(o.Old, o.New) {
			return false
		}
	}
	return true
}

// assetKeys are the keys under which CDK writes an asset's hash: a file asset's S3 key (Lambda and
// layer code, Elastic Beanstalk bundles), an image's URI or tag, a nested stack's template URL, a
// bucket deployment's keys, a state machine's or a Glue job's script. A hexadecimal run anywhere
// else (a role's or a layer's name, an environment variable, a provider's ARN) is not an asset's
// content, however much it looks like a hash.
var assetKeys = map[string]bool{
	"S3Key": true, "ImageUri": true, "Image": true, "TemplateURL": true, "SourceObjectKeys": true,
	"DefinitionS3Location": true, "ScriptLocation": true,
}

// hashesOnlyAt is true when old and new have the same shape and every string that differs is
// under an asset key (inAsset: one of the keys above it is) and differs only in asset hashes.
func hashesOnlyAt(old, new any, inAsset bool) bool {
	switch o := old.(type) {
	case string:
		n, ok := new.(string)
		return ok && (o == n || inAsset && hashOnly(o, n))
	case []any:
		n, ok := new.([]any)
		if !ok || len(o) != len(n) {
			return false
		}
		for i := range o {
			if !hashesOnlyAt(o[i], n[i], inAsset) {
				return false
			}
		}
		return true
	case *cfn.Object:
		n, ok := new.(*cfn.Object)
		if !ok || o.Len() != n.Len() {
			return false
		}
		for _, k := range o.Keys() {
			ov, _ := o.Get(k)
			nv, ok := n.Get(k)
			if !ok || !hashesOnlyAt(ov, nv, inAsset || assetKeys[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(old, new)
}

// assetMetadataOnly is true when two Metadata values differ only in CDK's asset bookkeeping
// (aws:asset:*) and construct path (aws:cdk:path).
func assetMetadataOnly(old, new any) bool {
	rest := func(v any) (*cfn.Object, bool) {
		out := cfn.NewObject()
		if v == nil {
			return out, true
		}
		o, ok := v.(*cfn.Object)
		if !ok {
			return nil, false
		}
		for _, k := range o.Keys() {
			if !strings.HasPrefix(k, "aws:asset:") && k != "aws:cdk:path" {
				val, _ := o.Get(k)
				out.Set(k, val)
			}
		}
		return out, true
	}
	a, aOK := rest(old)
	b, bOK := rest(new)
	return aOK && bOK && cfndiff.Equal(a, b)
}

// hashOnly is true when two strings differ only in the asset hashes they hold.
func hashOnly(a, b string) bool {
	if !assetHash().MatchString(a) || !assetHash().MatchString(b) {
		return false
	}
	return assetHash().ReplaceAllString(a, "#") == assetHash().ReplaceAllString(b, "#")
}

// foldAssets splits resources into those a view lists and the asset-only changes it counts.
func foldAssets(resources []*cfndiff.ResourceChange, fold bool) (shown, folded []*cfndiff.ResourceChange) {
	if !fold {
		return resources, nil
	}
	for _, r := range resources {
		if AssetOnly(r) {
			folded = append(folded, r)
		} else {
			shown = append(shown, r)
		}
	}
	return shown, folded
}
