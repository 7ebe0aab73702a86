package cfndiff

import (
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

// sameElements compares two lists as multisets.
func sameElements(x, y []any, key string, inPolicy bool) bool {
	used := make([]bool, len(y))
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
