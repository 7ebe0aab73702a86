package compat

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CompareSchemas lists every change between two JSON Schemas (draft-07, as the cloud assembly
// schema uses) from the point of view that matters to a toolkit: a NEW reader must accept every
// document an OLD writer produced. Schemas are decoded JSON (map[string]any, []any, ...).
// Paths point into the old schema. Dangling or cyclic $refs and non-schema values are errors.
func CompareSchemas(old, new any) ([]Change, error) {
	o, err := newSchemaDoc("old", old)
	if err != nil {
		return nil, err
	}
	n, err := newSchemaDoc("new", new)
	if err != nil {
		return nil, err
	}
	c := &comparer{old: o, new: n, seen: map[[2]string]bool{}}
	for _, name := range slices.Sorted(maps.Keys(o.defs)) {
		if _, ok := n.defs[name]; !ok {
			c.add("#/definitions/"+escape(name), Removed, fmt.Sprintf("definition %s was removed", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.defs)) {
		if _, ok := o.defs[name]; !ok {
			c.add("#/definitions/"+escape(name), AddedType, fmt.Sprintf("definition %s was added", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.defs)) {
		if nd, ok := n.defs[name]; ok {
			c.seen[[2]string{name, name}] = true
			c.node("#/definitions/"+escape(name), o.defs[name], nd)
		}
	}
	c.node("#", o.root, n.root)
	if c.err != nil {
		return nil, c.err
	}
	sort.SliceStable(c.changes, func(i, j int) bool { return c.changes[i].Path < c.changes[j].Path })
	return c.changes, nil
}

type schemaDoc struct {
	name string
	root any
	defs map[string]any
}

func newSchemaDoc(name string, v any) (*schemaDoc, error) {
	root, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); !isBool {
			return nil, fmt.Errorf("%s schema: the document is %s, not a JSON Schema object", name, jsonKind(v))
		}
		return &schemaDoc{name: name, root: v, defs: map[string]any{}}, nil
	}
	d := &schemaDoc{name: name, root: root, defs: map[string]any{}}
	if defs, ok := root["definitions"].(map[string]any); ok {
		d.defs = defs
	}
	if err := d.checkRefs("#", root); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(d.defs)) {
		_, err := d.resolve("#/definitions/"+escape(name), map[string]any{"$ref": "#/definitions/" + escape(name)})
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

// checkRefs verifies that every $ref names an existing definition and every subschema is a schema.
func (d *schemaDoc) checkRefs(path string, v any) error {
	switch x := v.(type) {
	case bool:
		return nil
	case map[string]any:
		if ref, ok := x["$ref"]; ok {
			s, isString := ref.(string)
			if !isString {
				return fmt.Errorf("%s schema: %s: $ref is %s, not a string", d.name, path, jsonKind(ref))
			}
			if _, err := d.target(path, s); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			sub := path + "/" + escape(k)
			switch k {
			case "properties", "patternProperties", "definitions":
				m, ok := x[k].(map[string]any)
				if !ok {
					return fmt.Errorf("%s schema: %s: %s is %s, not an object", d.name, sub, k, jsonKind(x[k]))
				}
				for _, name := range slices.Sorted(maps.Keys(m)) {
					if err := d.checkRefs(sub+"/"+escape(name), m[name]); err != nil {
						return err
					}
				}
			case "items", "additionalProperties", "not":
				if list, ok := x[k].([]any); ok && k == "items" {
					for i, e := range list {
						if err := d.checkRefs(sub+"/"+strconv.Itoa(i), e); err != nil {
							return err
						}
					}
					continue
				}
				if err := d.checkRefs(sub, x[k]); err != nil {
					return err
				}
			case "anyOf", "oneOf", "allOf":
				list, ok := x[k].([]any)
				if !ok {
					return fmt.Errorf("%s schema: %s: %s is %s, not an array", d.name, sub, k, jsonKind(x[k]))
				}
				for i, e := range list {
					if err := d.checkRefs(sub+"/"+strconv.Itoa(i), e); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return fmt.Errorf("%s schema: %s: a schema must be an object or a boolean, not %s", d.name, path, jsonKind(v))
}

func (d *schemaDoc) target(path, ref string) (any, error) {
	name, ok := strings.CutPrefix(ref, "#/definitions/")
	if !ok {
		return nil, fmt.Errorf("%s schema: %s: $ref %q is not a local #/definitions reference", d.name, path, ref)
	}
	// A $ref is a URI fragment: percent-decode it, then unescape the JSON pointer.
	if decoded, err := url.PathUnescape(name); err == nil {
		name = decoded
	}
	t, ok := d.defs[unescape(name)]
	if !ok {
		return nil, fmt.Errorf("%s schema: %s: $ref %q names a definition that does not exist", d.name, path, ref)
	}
	return t, nil
}

// resolve follows a chain of pure $refs to a schema with content, refusing cycles.
func (d *schemaDoc) resolve(path string, v any) (any, error) {
	visited := map[string]bool{}
	for {
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v, nil
		}
		if visited[ref] {
			return nil, fmt.Errorf("%s schema: %s: $ref %q is cyclic: it only leads back to itself", d.name, path, ref)
		}
		visited[ref] = true
		t, err := d.target(path, ref)
		if err != nil {
			return nil, err
		}
		v = t
	}
}

type comparer struct {
	old, new *schemaDoc
	changes  []Change
	seen     map[[2]string]bool
	err      error
}

func (c *comparer) add(path string, k Kind, detail string) {
	c.changes = append(c.changes, Change{Path: path, Kind: k, Bump: k.BumpFor(), Detail: detail})
}

func refName(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["$ref"].(string)
	name := strings.TrimPrefix(s, "#/definitions/")
	if decoded, err := url.PathUnescape(name); err == nil {
		name = decoded
	}
	return unescape(name)
}

// node compares two subschemas found at path.
func (c *comparer) node(path string, ov, nv any) {
	if c.err != nil {
		return
	}
	or, nr := refName(ov), refName(nv)
	if or != "" && nr != "" {
		// Definitions with the same name are compared once, at #/definitions; a ref that now
		// points elsewhere is compared here, once per pair.
		if c.seen[[2]string{or, nr}] {
			return
		}
		c.seen[[2]string{or, nr}] = true
	}
	var err error
	if ov, err = c.old.resolve(path, ov); err != nil {
		c.err = err
		return
	}
	if nv, err = c.new.resolve(path, nv); err != nil {
		c.err = err
		return
	}
	ob, oIsBool := ov.(bool)
	nb, nIsBool := nv.(bool)
	om, _ := ov.(map[string]any)
	nm, _ := nv.(map[string]any)
	switch {
	case oIsBool && nIsBool:
		if ob && !nb {
			c.add(path, Closed, "the schema no longer accepts anything")
		} else if !ob && nb {
			c.add(path, Opened, "the schema now accepts anything")
		}
		return
	case oIsBool:
		if ob && len(nm) > 0 {
			c.add(path, ConstraintAdded, "an unconstrained value is now constrained")
		}
		return
	case nIsBool:
		if !nb {
			c.add(path, Closed, "the schema no longer accepts anything")
		} else if len(om) > 0 {
			c.add(path, ConstraintLifted, "the value is no longer constrained")
		}
		return
	}
	c.types(path, om, nm)
	c.enums(path, om, nm)
	c.properties(path, om, nm)
	c.additional(path, om, nm)
	c.items(path, om, nm)
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		c.branches(path+"/"+k, k, om[k], nm[k])
	}
	c.patterns(path, om, nm)
	c.keywords(path, om, nm)
}

func typeSet(m map[string]any) map[string]bool {
	switch t := m["type"].(type) {
	case string:
		return map[string]bool{t: true}
	case []any:
		out := map[string]bool{}
		for _, e := range t {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
		return out
	}
	return nil // any type
}

func (c *comparer) types(path string, om, nm map[string]any) {
	ot, nt := typeSet(om), typeSet(nm)
	switch {
	case ot == nil && nt == nil:
		return
	case ot == nil:
		c.add(path+"/type", TypeChanged, fmt.Sprintf("any type was accepted, now only %s", setText(nt)))
		return
	case nt == nil:
		c.add(path+"/type", TypeWidened, fmt.Sprintf("only %s was accepted, now any type", setText(ot)))
		return
	}
	var lost, gained []string
	for t := range ot {
		if !nt[t] && !(t == "integer" && nt["number"]) {
			lost = append(lost, t)
		}
	}
	for t := range nt {
		if !ot[t] && !(t == "integer" && ot["number"]) {
			gained = append(gained, t)
		}
	}
	sort.Strings(lost)
	sort.Strings(gained)
	switch {
	case len(lost) > 0:
		c.add(path+"/type", TypeChanged, fmt.Sprintf("type %s → %s: %s no longer accepted",
			setText(ot), setText(nt), strings.Join(lost, ", ")))
	case len(gained) > 0:
		c.add(path+"/type", TypeWidened, fmt.Sprintf("type %s → %s", setText(ot), setText(nt)))
	}
}

func setText(s map[string]bool) string {
	keys := slices.Sorted(maps.Keys(s))
	if len(keys) == 1 {
		return keys[0]
	}
	return "[" + strings.Join(keys, ", ") + "]"
}

func (c *comparer) enums(path string, om, nm map[string]any) {
	for _, k := range []string{"enum", "const"} {
		ov, oOK := om[k]
		nv, nOK := nm[k]
		if k == "const" {
			ov, nv = []any{ov}, []any{nv}
		}
		switch {
		case !oOK && !nOK:
		case !oOK:
			c.add(path+"/"+k, EnumNarrowed, fmt.Sprintf("values are now restricted to %s", jsonText(nm[k])))
		case !nOK:
			c.add(path+"/"+k, EnumWidened, "values are no longer restricted")
		default:
			ol, _ := ov.([]any)
			nl, _ := nv.([]any)
			var lost, gained []string
			for _, x := range ol {
				if !containsValue(nl, x) {
					lost = append(lost, jsonText(x))
				}
			}
			for _, x := range nl {
				if !containsValue(ol, x) {
					gained = append(gained, jsonText(x))
				}
			}
			if len(lost) > 0 {
				c.add(path+"/"+k, EnumNarrowed, "no longer accepted: "+strings.Join(lost, ", "))
			} else if len(gained) > 0 {
				c.add(path+"/"+k, EnumWidened, "newly accepted: "+strings.Join(gained, ", "))
			}
		}
	}
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if reflect.DeepEqual(x, v) {
			return true
		}
	}
	return false
}

func requiredSet(m map[string]any) map[string]bool {
	out := map[string]bool{}
	list, _ := m["required"].([]any)
	for _, e := range list {
		if s, ok := e.(string); ok {
			out[s] = true
		}
	}
	return out
}

func (c *comparer) properties(path string, om, nm map[string]any) {
	op, _ := om["properties"].(map[string]any)
	np, _ := nm["properties"].(map[string]any)
	oreq, nreq := requiredSet(om), requiredSet(nm)
	var removed, added []string
	for _, k := range slices.Sorted(maps.Keys(op)) {
		if _, ok := np[k]; !ok {
			removed = append(removed, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(np)) {
		if _, ok := op[k]; !ok {
			added = append(added, k)
		}
	}
	// A property removed and one added with the same shape is a rename.
	renamedTo := map[string]string{}
	for _, r := range removed {
		for _, a := range added {
			if _, used := renamedTo[a]; !used && reflect.DeepEqual(op[r], np[a]) && !isEmptySchema(op[r]) {
				renamedTo[a] = r
				c.add(path+"/properties/"+escape(r), Renamed, fmt.Sprintf("property %s was renamed to %s (same shape)", r, a))
				break
			}
		}
	}
	renamedFrom := map[string]bool{}
	for _, r := range renamedTo {
		renamedFrom[r] = true
	}
	for _, r := range removed {
		if !renamedFrom[r] {
			c.add(path+"/properties/"+escape(r), Removed, fmt.Sprintf("property %s was removed", r))
		}
	}
	for _, a := range added {
		if _, renamed := renamedTo[a]; renamed {
			continue
		}
		if nreq[a] {
			c.add(path+"/properties/"+escape(a), AddedRequired, fmt.Sprintf("new required property %s", a))
		} else {
			c.add(path+"/properties/"+escape(a), AddedOptional, fmt.Sprintf("new optional property %s", a))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(op)) {
		if _, ok := np[k]; !ok {
			continue
		}
		switch {
		case !oreq[k] && nreq[k]:
			c.add(path+"/properties/"+escape(k), MadeRequired, fmt.Sprintf("property %s is now required", k))
		case oreq[k] && !nreq[k]:
			c.add(path+"/properties/"+escape(k), MadeOptional, fmt.Sprintf("property %s is no longer required", k))
		}
		c.node(path+"/properties/"+escape(k), op[k], np[k])
	}
	// Required names without a property schema.
	for _, k := range slices.Sorted(maps.Keys(nreq)) {
		if _, inProps := np[k]; !inProps && !oreq[k] {
			c.add(path+"/required", MadeRequired, fmt.Sprintf("property %s is now required", k))
		}
	}
}

func isEmptySchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func (c *comparer) additional(path string, om, nm map[string]any) {
	ov, oOK := om["additionalProperties"]
	nv, nOK := nm["additionalProperties"]
	oClosed := oOK && ov == false
	nClosed := nOK && nv == false
	switch {
	case !oClosed && nClosed:
		c.add(path+"/additionalProperties", Closed, "additional properties are no longer allowed")
	case oClosed && !nClosed:
		c.add(path+"/additionalProperties", Opened, "additional properties are now allowed")
	case oOK && nOK && !oClosed && !nClosed:
		c.node(path+"/additionalProperties", ov, nv)
	case oOK && !nOK && !oClosed:
		c.add(path+"/additionalProperties", ConstraintLifted, "additional properties are no longer constrained")
	case !oOK && nOK && !nClosed:
		c.add(path+"/additionalProperties", ConstraintAdded, "additional properties are now constrained")
	}
}

func (c *comparer) items(path string, om, nm map[string]any) {
	ov, oOK := om["items"]
	nv, nOK := nm["items"]
	switch {
	case oOK && nOK:
		ol, oList := ov.([]any)
		nl, nList := nv.([]any)
		if oList && nList {
			for i := range ol {
				if i < len(nl) {
					c.node(fmt.Sprintf("%s/items/%d", path, i), ol[i], nl[i])
				}
			}
			return
		}
		c.node(path+"/items", ov, nv)
	case oOK:
		c.add(path+"/items", ConstraintLifted, "array items are no longer constrained")
	case nOK:
		c.add(path+"/items", ConstraintAdded, "array items are now constrained")
	}
}

// branches compares anyOf/oneOf/allOf lists, pairing branches by $ref name, else by position.
func (c *comparer) branches(path, key string, ov, nv any) {
	ol, _ := ov.([]any)
	nl, _ := nv.([]any)
	if len(ol) == 0 && len(nl) == 0 {
		return
	}
	matched := make([]bool, len(nl))
	// pick finds the first unmatched new branch satisfying ok.
	pick := func(ok func(n any) bool) int {
		for k, n := range nl {
			if !matched[k] && ok(n) {
				return k
			}
		}
		return -1
	}
	for i, o := range ol {
		j := -1
		if name := refName(o); name != "" {
			j = pick(func(n any) bool { return refName(n) == name })
		} else {
			// Inline branches: the same shape first, then the same type, then the same position,
			// so a branch inserted in the middle does not shift every comparison after it.
			j = pick(func(n any) bool { return reflect.DeepEqual(o, n) })
			if j < 0 {
				om, _ := o.(map[string]any)
				j = pick(func(n any) bool {
					nm, _ := n.(map[string]any)
					return refName(n) == "" && om != nil && nm != nil && reflect.DeepEqual(om["type"], nm["type"])
				})
			}
			if j < 0 && i < len(nl) && !matched[i] && refName(nl[i]) == "" {
				j = i
			}
		}
		if j < 0 {
			kind := Removed
			if key == "allOf" {
				kind = ConstraintLifted
			}
			c.add(fmt.Sprintf("%s/%d", path, i), kind, fmt.Sprintf("%s branch %s was removed", key, branchName(o, i)))
			continue
		}
		matched[j] = true
		c.node(fmt.Sprintf("%s/%d", path, i), o, nl[j])
	}
	for j, n := range nl {
		if matched[j] {
			continue
		}
		kind := TypeWidened
		if key == "allOf" {
			kind = ConstraintAdded
		}
		c.add(fmt.Sprintf("%s/%d", path, j), kind, fmt.Sprintf("%s branch %s was added", key, branchName(n, j)))
	}
}

func branchName(v any, i int) string {
	if name := refName(v); name != "" {
		return name
	}
	return strconv.Itoa(i)
}

func (c *comparer) patterns(path string, om, nm map[string]any) {
	op, _ := om["patternProperties"].(map[string]any)
	np, _ := nm["patternProperties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(op)) {
		if nv, ok := np[k]; ok {
			c.node(path+"/patternProperties/"+escape(k), op[k], nv)
		} else {
			c.add(path+"/patternProperties/"+escape(k), Removed, fmt.Sprintf("pattern property %s was removed", k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(np)) {
		if _, ok := op[k]; !ok {
			c.add(path+"/patternProperties/"+escape(k), AddedOptional, fmt.Sprintf("pattern property %s was added", k))
		}
	}
}

var (
	documentationKeywords = []string{"description", "title", "default", "examples", "$comment"}
	constraintKeywords    = []string{"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "multipleOf"}
)

func (c *comparer) keywords(path string, om, nm map[string]any) {
	for _, k := range documentationKeywords {
		if !reflect.DeepEqual(om[k], nm[k]) {
			c.add(path+"/"+k, Documentation, fmt.Sprintf("%s changed", k))
		}
	}
	for _, k := range constraintKeywords {
		ov, oOK := om[k]
		nv, nOK := nm[k]
		switch {
		case oOK && !nOK:
			c.add(path+"/"+k, ConstraintLifted, fmt.Sprintf("%s %s was removed", k, jsonText(ov)))
		case nOK && (!oOK || !reflect.DeepEqual(ov, nv)):
			c.add(path+"/"+k, ConstraintAdded, fmt.Sprintf("%s is now %s", k, jsonText(nv)))
		}
	}
}
