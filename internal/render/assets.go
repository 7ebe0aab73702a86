package render

import (
	"reflect"
	"regexp"

	"github.com/cdkbot/cdkbot/internal/cfn"
	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// assetHash is how CDK names an asset: the SHA-256 of its content, in hexadecimal, in the S3 key
// of a file asset (Lambda Code.S3Key, a bucket deployment's SourceObjectKeys, a nested stack's
// TemplateURL) and the tag of an image asset.
var assetHash = regexp.MustCompile(`[0-9a-f]{64}`)

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
		if resolvesAnew || !hashOnly(p.Old, p.OldPresent, p.New, p.NewPresent) {
			return false
		}
	}
	for _, o := range r.Other {
		// The asset's path in the metadata (aws:asset:path) moves with its hash; metadata
		// changes nothing in AWS.
		if o.Key != "Metadata" {
			return false
		}
	}
	return true
}

// hashOnly is true when both values are present and differ only in the asset hashes they hold.
func hashOnly(old any, oldOK bool, new any, newOK bool) bool {
	if !oldOK || !newOK || reflect.DeepEqual(old, new) {
		return false
	}
	a, b := cfn.JSON(old), cfn.JSON(new)
	if !assetHash.MatchString(a) || !assetHash.MatchString(b) {
		return false
	}
	return assetHash.ReplaceAllString(a, "#") == assetHash.ReplaceAllString(b, "#")
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
