package render

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/review"
)

// identities are n stacks' deploy identities; ids may be hostile.
func identities(n int, id func(int) string) map[string]review.Identity {
	out := map[string]review.Identity{}
	for i := range n {
		fields := map[string]string{}
		for _, f := range []string{"stack name", "environment", "template", "parameters", "tags",
			"termination protection", "notification ARNs", "roles", "assets"} {
			fields[f] = fmt.Sprintf("%08x", i)
		}
		out[id(i)] = review.Identity{Digest: fmt.Sprintf("%032x", i), Fields: fields}
	}
	return out
}

// However many stacks, at every budget: the comment fits, its marker is whole and parses, and
// the identities it leaves out are in parts that fit GitHub's limit and read back exactly; a
// small app keeps them in the marker as before.
func TestMarkerFitsEveryBudgetWhole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stacks int
		id     func(int) string
	}{
		{3, func(i int) string { return fmt.Sprintf("Stack%d", i) }},
		{800, func(i int) string { return fmt.Sprintf("Service%03d", i) }},
		{2000, func(i int) string { return fmt.Sprintf("Stage/Nested-->%04d/<b>x</b>--%s", i, strings.Repeat("-", 40)) }},
	} {
		rep := &review.Report{Key: "cdk/review/.", HeadSHA: "h", Identity: identities(c.stacks, c.id)}
		want := review.IdentityStrings(rep.Identity)
		for _, budget := range []int{GitHubCommentLimit - 1024, 32 << 10, 16 << 10, 8 << 10} {
			var b strings.Builder
			if err := ReviewMarkdown(&b, rep, budget); err != nil {
				t.Fatal(err)
			}
			body := b.String()
			m, ok := ParseMarker(body)
			if !ok || b.Len() > budget || strings.Count(body, "-->") != 1 || m.Key != rep.Key {
				t.Fatalf("%d stacks, budget %d: %d bytes, marker ok %v, %d \"-->\"", c.stacks, budget, b.Len(), ok,
					strings.Count(body, "-->"))
			}
			parts := IdentityComments(rep, budget)
			if c.stacks == 3 {
				if !maps.Equal(m.Stacks, want) || m.StacksDigest != "" || parts != nil {
					t.Errorf("a small app's identities must stay in its marker: %+v", m)
				}
				continue
			}
			if m.Stacks != nil || m.IdentityParts != len(parts) || len(parts) < 2 {
				t.Fatalf("%d stacks, budget %d: marker %d parts, %d comments", c.stacks, budget, m.IdentityParts, len(parts))
			}
			for i, p := range parts {
				if len(p) > identityPartLimit || strings.Count(p, "-->") != 1 {
					t.Errorf("part %d: %d bytes, %d \"-->\"", i+1, len(p), strings.Count(p, "-->"))
				}
			}
			// The deploy reads them back among other comments, oldest first.
			got, err := JoinIdentityParts(m, append([]string{"lgtm", body}, parts...))
			if err != nil || !maps.Equal(got, want) {
				t.Fatalf("%d stacks, budget %d: read back %d of %d identities: %v", c.stacks, budget, len(got), len(want), err)
			}
		}
	}
}

// The deploy never takes a partial or altered set: a missing part, a part of another review (an
// older digest, another key) or an edited identity refuses; a newer copy of a part wins.
func TestJoinIdentityPartsRefusesWhatIsNotWhole(t *testing.T) {
	t.Parallel()
	rep := &review.Report{Key: "k", Identity: identities(1000, func(i int) string { return fmt.Sprintf("S%04d", i) })}
	var b strings.Builder
	if err := ReviewMarkdown(&b, rep, 0); err != nil {
		t.Fatal(err)
	}
	m, _ := ParseMarker(b.String())
	parts := IdentityComments(rep, 0)
	if len(parts) < 3 {
		t.Fatalf("%d parts", len(parts))
	}
	other := &review.Report{Key: "k", Identity: identities(1000, func(i int) string { return fmt.Sprintf("T%04d", i) })}
	otherKey := &review.Report{Key: "k2", Identity: rep.Identity}
	second, _ := ParseIdentityPart(parts[1])
	var victim string
	for _, enc := range second.Stacks {
		victim = enc[:32]
		break
	}
	edited := strings.Replace(parts[1], victim, fmt.Sprintf("%032x", 999999), 1)
	if edited == parts[1] {
		t.Fatal("the edit changed nothing")
	}
	for _, c := range []struct {
		name   string
		bodies []string
		want   string
	}{
		{"a part missing", []string{parts[0], parts[2]}, fmt.Sprintf("2 of its %d parts found", len(parts))},
		{"a part of another review", append([]string{IdentityComments(other, 0)[1]}, parts[0], parts[2]),
			fmt.Sprintf("2 of its %d parts found", len(parts))},
		{"a part of another key", append([]string{IdentityComments(otherKey, 0)[1]}, parts[0], parts[2]),
			fmt.Sprintf("2 of its %d parts found", len(parts))},
		{"an identity edited", []string{parts[0], edited, parts[2]}, "do not match the digest"},
		{"the newest copy of a part", []string{parts[0], edited, parts[2], parts[1]}, ""},
	} {
		_, err := JoinIdentityParts(m, c.bodies)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, ok := ParseMarker(parts[0]); ok {
		t.Error("a part must not be taken for a review's marker")
	}
}
