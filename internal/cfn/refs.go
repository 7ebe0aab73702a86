package cfn

import (
	"strings"
)

// RefKind says how one resource refers to another.
type RefKind uint8

// Reference kinds.
const (
	RefRef    RefKind = iota // {"Ref": X}
	RefGetAtt                // {"Fn::GetAtt": [X, Attr]} or "X.Attr"
	RefSub                   // "${X}" or "${X.Attr}" inside Fn::Sub
)

// Reference is a use of another template entity (resource, parameter, pseudo parameter).
type Reference struct {
	Target    string
	Attribute string // for GetAtt and ${X.Attr}; "" otherwise
	Kind      RefKind
}

// References returns every Ref, Fn::GetAtt and Fn::Sub reference anywhere inside v, including
// inside other intrinsics (Fn::Join, Fn::If, Fn::Select, …). Pseudo parameters and parameters
// are included; callers keep the targets they care about.
func References(v any) []Reference {
	var out []Reference
	walkRefs(v, func(r Reference) { out = append(out, r) })
	return out
}

func walkRefs(v any, emit func(Reference)) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			walkRefs(e, emit)
		}
	case *Object:
		if name, arg, ok := Intrinsic(x); ok {
			switch name {
			case "Ref":
				if s, ok := arg.(string); ok {
					emit(Reference{Target: s, Kind: RefRef})
					return
				}
			case "Fn::GetAtt":
				switch a := arg.(type) {
				case string:
					res, attr, _ := strings.Cut(a, ".")
					emit(Reference{Target: res, Attribute: attr, Kind: RefGetAtt})
					return
				case []any:
					if len(a) > 0 {
						if res, ok := a[0].(string); ok {
							attr, _ := safeIndex(a, 1).(string)
							emit(Reference{Target: res, Attribute: attr, Kind: RefGetAtt})
							for _, rest := range a[1:] {
								walkRefs(rest, emit)
							}
							return
						}
					}
				}
			case "Fn::Sub":
				subRefs(arg, emit)
				return
			}
		}
		for _, v := range x.vals {
			walkRefs(v, emit)
		}
	}
}

func safeIndex(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

// subRefs handles both forms of Fn::Sub: "text" and ["text", {Var: value}]. Names defined in the
// variable map are local and are not references; the map's values are walked normally.
func subRefs(arg any, emit func(Reference)) {
	var text string
	var vars *Object
	switch a := arg.(type) {
	case string:
		text = a
	case []any:
		if len(a) > 0 {
			text, _ = a[0].(string)
			walkRefs(a[0], emit)
		}
		if len(a) > 1 {
			vars = AsObject(a[1])
			walkRefs(a[1], emit)
		}
	default:
		walkRefs(arg, emit)
		return
	}
	for _, name := range SubVariables(text) {
		target, attr, _ := strings.Cut(name, ".")
		if vars.Has(name) || vars.Has(target) {
			continue
		}
		kind := RefSub
		emit(Reference{Target: target, Attribute: attr, Kind: kind})
	}
}

// SubVariables returns the ${...} names of an Fn::Sub string, skipping ${!Literal} escapes.
func SubVariables(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		s = s[i+2:]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return out
		}
		name := s[:j]
		s = s[j+1:]
		if name == "" || strings.HasPrefix(name, "!") {
			continue
		}
		out = append(out, strings.TrimSpace(name))
	}
}

// DependsOn returns a resource's DependsOn targets (a string or a list of strings).
func DependsOn(resource *Object) []string {
	v, _ := resource.Get("DependsOn")
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ImportNames are the export names v imports with Fn::ImportValue of a literal name.
func ImportNames(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case *Object:
			if name, arg, ok := Intrinsic(x); ok && name == "Fn::ImportValue" {
				if s, ok := arg.(string); ok {
					out = append(out, s)
					return
				}
			}
			for _, k := range x.Keys() {
				e, _ := x.Get(k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
