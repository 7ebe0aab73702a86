package cfndiff

import (
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// renderIntrinsics turns intrinsics into the readable strings security tables show:
// {"Ref": "R"} → "${R}", {"Fn::GetAtt": ["R", "Arn"]} → "${R.Arn}", Fn::Join joined, any other
// intrinsic as its JSON. {"Ref": "AWS::NoValue"} disappears from lists and objects; at the top
// it yields ok=false (absent). Strings follow JavaScript's coercions so output matches what CDK
// users see from the reference tool.
func renderIntrinsics(x any) (v any, ok bool) {
	switch t := x.(type) {
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if isNoValue(e) {
				continue
			}
			r, _ := renderIntrinsics(e)
			out = append(out, r)
		}
		return out, true
	case *cfn.Object:
		if isNoValue(t) {
			return nil, false
		}
		if name, arg, ok := cfn.Intrinsic(t); ok {
			switch name {
			case "Ref":
				return "${" + jsString(arg) + "}", true
			case "Fn::GetAtt":
				parts := getAttParts(arg)
				return "${" + jsString(index(parts, 0)) + "." + jsString(index(parts, 1)) + "}", true
			case "Fn::Join":
				parts, _ := arg.([]any)
				sep := index(parts, 0)
				if list, ok := index(parts, 1).([]any); ok {
					var b strings.Builder
					first := true
					for _, e := range list {
						if isNoValue(e) {
							continue
						}
						if !first {
							b.WriteString(jsString(sep))
						}
						first = false
						r, _ := renderIntrinsics(e)
						b.WriteString(joinElement(r))
					}
					return b.String(), true
				}
				return stringifyIntrinsic("Fn::Join", []any{sep, index(parts, 1)}), true
			}
			return stringifyIntrinsic(name, arg), true
		}
		out := cfn.NewObject()
		for _, k := range t.Keys() {
			e, _ := t.Get(k)
			if isNoValue(e) {
				continue
			}
			r, _ := renderIntrinsics(e)
			out.Set(k, r)
		}
		return out, true
	}
	return x, true
}

func stringifyIntrinsic(name string, arg any) string {
	o := cfn.NewObject()
	if r, ok := renderIntrinsics(arg); ok {
		o.Set(name, r)
	}
	return cfn.JSON(o)
}

// getAttParts accepts both the list form and the "Resource.Attribute" string form.
func getAttParts(arg any) []any {
	switch a := arg.(type) {
	case []any:
		return a
	case string:
		res, attr, ok := strings.Cut(a, ".")
		if !ok {
			return []any{res}
		}
		return []any{res, attr}
	}
	return nil
}

func index(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return undefined{}
}

// undefined stands for JavaScript's undefined where the reference's behaviour depends on it.
type undefined struct{}

func isNoValue(x any) bool {
	name, arg, ok := cfn.Intrinsic(x)
	return ok && name == "Ref" && arg == "AWS::NoValue"
}

// jsString is JavaScript's String(x).
func jsString(x any) string {
	switch t := x.(type) {
	case undefined:
		return "undefined"
	case nil:
		return "null"
	case string:
		return t
	case bool:
		if t {
			return "true"
		}
		return "false"
	case cfn.Number:
		return t.Canonical()
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = joinElement(e)
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// joinElement is how Array.prototype.join renders an element: null and undefined are empty.
func joinElement(x any) string {
	switch x.(type) {
	case nil, undefined:
		return ""
	}
	return jsString(x)
}
