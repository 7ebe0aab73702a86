package cfndiff

import (
	"fmt"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// maxDetails bounds the leaf changes listed for one property; a rewritten policy of hundreds
// of statements is summarised, not dumped.
const maxDetails = 20

// Detail is one leaf-level change inside a property value: a path ("[2].Value",
// "Statement[0].Action") and the values on both sides.
type Detail struct {
	Path                   string
	Old, New               any
	OldPresent, NewPresent bool
}

// Details lists where two property values differ, descending through objects and through
// lists of equal length; intrinsic functions are compared whole. truncated is true when more
// than maxDetails leaves differ.
func (p *PropertyChange) Details() (out []Detail, truncated bool) {
	if !p.Changed {
		return nil, false
	}
	collect(&out, "", p.Old, p.New, p.OldPresent, p.NewPresent, p.Name)
	if len(out) > maxDetails {
		return out[:maxDetails], true
	}
	return out, false
}

func collect(out *[]Detail, path string, a, b any, aOK, bOK bool, key string) {
	if len(*out) > maxDetails {
		return
	}
	if aOK && bOK && equal(a, b, key, false) {
		return
	}
	ao, aObj := a.(*cfn.Object)
	bo, bObj := b.(*cfn.Object)
	_, _, aIntr := cfn.Intrinsic(a)
	_, _, bIntr := cfn.Intrinsic(b)
	if aOK && bOK && aObj && bObj && !aIntr && !bIntr {
		for _, k := range unionKeys(ao, bo) {
			av, aHas := ao.Get(k)
			bv, bHas := bo.Get(k)
			collect(out, joinPath(path, k), av, bv, aHas, bHas, k)
		}
		return
	}
	al, aList := a.([]any)
	bl, bList := b.([]any)
	if aOK && bOK && aList && bList && key == "Tags" {
		if am, ok := tagsByKey(al); ok {
			if bm, ok := tagsByKey(bl); ok {
				keys := unionKeys(am, bm)
				for _, k := range keys {
					av, aHas := am.Get(k)
					bv, bHas := bm.Get(k)
					collect(out, fmt.Sprintf("%s[%s]", path, k), av, bv, aHas, bHas, "")
				}
				return
			}
		}
	}
	if aOK && bOK && aList && bList && unorderedDetailKeys[key] {
		// A set: list what was added and removed, not positions.
		for _, e := range unmatched(bl, al, key) {
			collect(out, path+"[+]", nil, e, false, true, key)
		}
		for _, e := range unmatched(al, bl, key) {
			collect(out, path+"[-]", e, nil, true, false, key)
		}
		return
	}
	if aOK && bOK && aList && bList && len(al) == len(bl) {
		for i := range al {
			collect(out, fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], true, true, key)
		}
		return
	}
	*out = append(*out, Detail{Path: path, Old: a, New: b, OldPresent: aOK, NewPresent: bOK})
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// tagsByKey turns a [{Key, Value}] list into Key → Value, so a tag change reads as
// "Tags[team]" whatever the tags' order.
func tagsByKey(list []any) (*cfn.Object, bool) {
	out := cfn.NewObject()
	for _, e := range list {
		k, ok := get(e, "Key").(string)
		if !ok || out.Has(k) {
			return nil, false
		}
		v, _ := cfn.AsObject(e).Get("Value")
		out.Set(k, v)
	}
	return out, true
}

// unorderedDetailKeys are lists shown as sets in details: their order means nothing to AWS.
var unorderedDetailKeys = map[string]bool{"Tags": true, "SecurityGroupIngress": true, "SecurityGroupEgress": true,
	"ManagedPolicyArns": true, "Statement": true, "Action": true, "NotAction": true, "Resource": true, "NotResource": true}

// unmatched returns the elements of xs with no equal element in ys (as multisets).
func unmatched(xs, ys []any, key string) []any {
	used := make([]bool, len(ys))
	var out []any
next:
	for _, x := range xs {
		for j, y := range ys {
			if !used[j] && equal(x, y, key, key == "Statement") {
				used[j] = true
				continue next
			}
		}
		out = append(out, x)
	}
	return out
}
