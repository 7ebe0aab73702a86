package cfndiff

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// Equal compares two template values as CloudFormation does: structurally, with the scalar
// coercions CloudFormation itself applies (the string "5" equals the number 5, "true" equals
// true, 10 equals 10.0), and with arrays compared as sets where their order has no effect on
// the deployed resource (Tags, security-group rules, managed policy lists, everything inside an
// IAM policy document, DependsOn). Unlike the reference it does not coerce through JavaScript's
// Number(): "" is not 0, [] is not "", "0x10" is not 16.
func Equal(a, b any) bool { return equal(a, b, "", false) }

// unorderedKeys name arrays whose order CloudFormation and the services ignore.
var unorderedKeys = map[string]bool{
	"Tags": true, "SecurityGroupIngress": true, "SecurityGroupEgress": true, "ManagedPolicyArns": true,
}

// equal compares a and b; key is the object key a and b were found under, inPolicy is true
// inside an IAM policy document (an object with a Statement list), where all lists are sets.
func equal(a, b any, key string, inPolicy bool) bool {
	switch x := a.(type) {
	case *cfn.Object:
		y, ok := b.(*cfn.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		if xa, ok := x.Get("Fn::GetAtt"); ok && x.Len() == 1 {
			// "Res.Attr" and ["Res", "Attr"] are the same reference.
			if ya, ok := y.Get("Fn::GetAtt"); ok {
				return equal(getAttParts(xa), getAttParts(ya), "Fn::GetAtt", false)
			}
		}
		_, _, intrinsic := cfn.Intrinsic(x)
		childPolicy := (inPolicy || x.Has("Statement")) && !intrinsic
		for _, k := range x.Keys() {
			xv, _ := x.Get(k)
			yv, ok := y.Get(k)
			if !ok {
				return false
			}
			if k == "DependsOn" {
				if !dependsOnEqual(xv, yv) {
					return false
				}
				continue
			}
			if !equal(xv, yv, k, childPolicy) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if inPolicy || unorderedKeys[key] {
			return sameElements(x, y, key, inPolicy)
		}
		for i := range x {
			if !equal(x[i], y[i], key, inPolicy) {
				return false
			}
		}
		return true
	}
	return scalarEqual(a, b)
}

// sameElements compares two lists as multisets. Past a few elements each element of y is
// bucketed by setHash, which equal values share, so a list of n tags costs n comparisons, not
// n²: a template with 25,000 tags on a resource no longer holds a review for seconds.
func sameElements(x, y []any, key string, inPolicy bool) bool {
	used := make([]bool, len(y))
	if len(y) <= 8 {
	outer:
		for _, xe := range x {
			for j, ye := range y {
				if !used[j] && equal(xe, ye, key, inPolicy) {
					used[j] = true
					continue outer
				}
			}
			return false
		}
		return true
	}
	buckets := make(map[uint64][]int, len(y))
	for j, ye := range y {
		h := setHash(ye, key, inPolicy)
		buckets[h] = append(buckets[h], j)
	}
	for _, xe := range x {
		found := false
		for _, j := range buckets[setHash(xe, key, inPolicy)] {
			if !used[j] && equal(xe, y[j], key, inPolicy) {
				used[j], found = true, true
				break
			}
		}
		if !found { // equal values hash alike: no other bucket holds a match
			return false
		}
	}
	return true
}

// setHash is a hash that values equal under equal (with the same key and policy context) share:
// scalars by their coerced value, objects by their keys and values (Fn::GetAtt's two forms
// alike), lists in order or, where equal compares them as sets, in any order.
func setHash(v any, key string, inPolicy bool) uint64 {
	h := fnv.New64a()
	write := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	switch x := v.(type) {
	case *cfn.Object:
		if xa, ok := x.Get("Fn::GetAtt"); ok && x.Len() == 1 {
			write("getatt")
			return mix(h.Sum64(), setHash(getAttParts(xa), "Fn::GetAtt", false))
		}
		_, _, intrinsic := cfn.Intrinsic(x)
		childPolicy := (inPolicy || x.Has("Statement")) && !intrinsic
		write("{")
		sum := h.Sum64()
		for _, k := range x.Keys() { // keys in any order: equal looks each one up
			kh := fnv.New64a()
			kh.Write([]byte(k))
			xv, _ := x.Get(k)
			var vh uint64
			switch list, ok := dependsOnList(xv); {
			case k == "DependsOn" && ok:
				vh = unorderedHash(list, "", false)
			case k == "DependsOn": // equal compares it without context
				vh = setHash(xv, "", false)
			default:
				vh = setHash(xv, k, childPolicy)
			}
			sum += mix(kh.Sum64(), vh)
		}
		return sum
	case []any:
		if inPolicy || unorderedKeys[key] {
			return unorderedHash(x, key, inPolicy)
		}
		write("[")
		sum := h.Sum64()
		for _, e := range x {
			sum = mix(sum, setHash(e, key, inPolicy))
		}
		return sum
	case nil:
		write("null")
	case bool:
		write("b" + strconv.FormatBool(x))
	case string:
		switch {
		case x == "true" || x == "false":
			write("b" + x)
		case isDecimalLiteral(x):
			write(numberKey(cfn.Number(x)))
		default:
			write("s" + x)
		}
	case cfn.Number:
		write(numberKey(x))
	default:
		write("?")
	}
	return h.Sum64()
}

// unorderedHash combines the elements' hashes so that their order does not count.
func unorderedHash(list []any, key string, inPolicy bool) uint64 {
	sum := uint64(0x9e3779b97f4a7c15)
	for _, e := range list {
		sum += mix(setHash(e, key, inPolicy), 0x2545f4914f6cdd1d)
	}
	return sum
}

// numberKey is a number's hash key: its value where it parses, else its text.
func numberKey(n cfn.Number) string {
	if f, ok := n.Float(); ok {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "n" + string(n)
}

// mix combines two hashes (a 64-bit finalizer over their sum), order-dependent.
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 + b
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func dependsOnEqual(a, b any) bool {
	as, aok := dependsOnList(a)
	bs, bok := dependsOnList(b)
	if !aok || !bok {
		return equal(a, b, "", false)
	}
	return len(as) == len(bs) && sameElements(as, bs, "", false)
}

func dependsOnList(v any) ([]any, bool) {
	switch x := v.(type) {
	case string:
		return []any{x}, true
	case []any:
		return x, true
	}
	return nil, false
}

// scalarEqual compares non-container values with CloudFormation's coercions.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		switch y := b.(type) {
		case bool:
			return x == y
		case string:
			return y == strconv.FormatBool(x)
		}
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case bool:
			return x == strconv.FormatBool(y)
		case cfn.Number:
			return numericString(x, y)
		}
	case cfn.Number:
		switch y := b.(type) {
		case cfn.Number:
			return numbersEqual(x, y)
		case string:
			return numericString(y, x)
		}
	}
	return false
}

func numbersEqual(x, y cfn.Number) bool {
	if x == y {
		return true
	}
	xf, xok := x.Float()
	yf, yok := y.Float()
	return xok && yok && xf == yf
}

// numericString is true when s is a plain decimal literal with n's value ("5", "5.0", "-1").
func numericString(s string, n cfn.Number) bool {
	if !isDecimalLiteral(s) {
		return false
	}
	return numbersEqual(cfn.Number(s), n)
}

func isDecimalLiteral(s string) bool {
	if s == "" {
		return false
	}
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(s, ".")
	digits := func(p string) bool { return p != "" && strings.Trim(p, "0123456789") == "" }
	if !digits(intPart) {
		return false
	}
	return !hasDot || digits(frac)
}
