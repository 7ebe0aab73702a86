package cfndiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cdkbot/cdkbot/internal/cfn"
)

// quadraticSameElements is the multiset comparison without buckets: what sameElements must
// agree with.
func quadraticSameElements(x, y []any, key string, inPolicy bool) bool {
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

// randomElement draws values whose equality goes through every coercion equal makes: numbers
// and numeric strings, booleans and their words, both Fn::GetAtt forms, nested sets, DependsOn
// as a string or a list.
func randomElement(r *rand.Rand, depth int) any {
	scalars := []any{"5", cfn.Number("5"), cfn.Number("5.0"), "5.0", true, "true", false, "false", nil, "a", "b",
		cfn.Number("-1"), "-1", "x.y"}
	if depth > 2 || r.IntN(3) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	switch r.IntN(4) {
	case 0:
		return obj("Fn::GetAtt", []any{"a", "b"}[r.IntN(2)].(string)+".Arn")
	case 1:
		return obj("Fn::GetAtt", []any{[]any{"a", "Arn"}, []any{"b", "Arn"}}[r.IntN(2)])
	case 2:
		n := r.IntN(3)
		list := make([]any, n)
		for i := range list {
			list[i] = randomElement(r, depth+1)
		}
		return obj("Key", randomElement(r, depth+1), "Tags", list,
			"DependsOn", []any{"R", []any{"R", "S"}, []any{"S", "R"}}[r.IntN(3)])
	default:
		return obj("Key", randomElement(r, depth+1), "Value", randomElement(r, depth+1))
	}
}

// Bucketed by hash, the comparison says what the element-by-element one says, on lists long
// enough to be bucketed, in a tag list and in a policy document, shuffled and not.
func TestSameElementsAgreesWithTheQuadraticComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	agreeTrue := 0
	for i := range 4000 {
		n := 9 + r.IntN(12)
		x := make([]any, n)
		for j := range x {
			x[j] = randomElement(r, 0)
		}
		y := append([]any(nil), x...)
		r.Shuffle(len(y), func(a, b int) { y[a], y[b] = y[b], y[a] })
		if r.IntN(2) == 0 {
			y[r.IntN(n)] = randomElement(r, 0)
		}
		for _, c := range []struct {
			key      string
			inPolicy bool
		}{{"Tags", false}, {"Action", true}} {
			want := quadraticSameElements(x, y, c.key, c.inPolicy)
			if got := sameElements(x, y, c.key, c.inPolicy); got != want {
				t.Fatalf("case %d (%s): bucketed %v, element by element %v\nx=%s\ny=%s", i, c.key, got, want,
					fmt.Sprint(x), fmt.Sprint(y))
			}
			if want {
				agreeTrue++
			}
		}
	}
	if agreeTrue < 1000 {
		t.Errorf("only %d equal cases: the generator does not test equality", agreeTrue)
	}
}

// BenchmarkTagsOfOneResource is the attack a helper found: one resource with 25,000 tags, the
// last changed (was ~0.5 s a comparison).
func BenchmarkTagsOfOneResource(b *testing.B) {
	tags := func(last string) []any {
		list := make([]any, 25000)
		for i := range list {
			list[i] = obj("Key", fmt.Sprintf("k%05d", i), "Value", "v")
		}
		list[len(list)-1] = obj("Key", "k24999", "Value", last)
		return list
	}
	x, y := tags("v"), tags("w")
	b.ReportAllocs()
	for b.Loop() {
		if sameElements(x, y, "Tags", false) {
			b.Fatal("the changed tag was not seen")
		}
	}
}

// obj builds an object of key, value pairs.
func obj(kv ...any) *cfn.Object {
	o := cfn.NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}
