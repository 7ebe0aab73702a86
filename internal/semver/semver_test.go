package semver

import (
	"strings"
	"testing"
)

func versions(ss ...string) []Version {
	out := make([]Version, len(ss))
	for i, s := range ss {
		out[i] = MustParse(s)
	}
	return out
}

func join(vs []Version) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, " ")
}

func TestOrdering(t *testing.T) {
	t.Parallel()
	vs := versions("1.0.0", "1.0.0-rc.1", "1.0.0-alpha", "0.9.9", "1.0.0-alpha.1", "1.0.0+build.5", "2.0.0", "1.10.0", "1.2.0")
	Sort(vs)
	if got, want := join(vs), "0.9.9 1.0.0-alpha 1.0.0-alpha.1 1.0.0-rc.1 1.0.0 1.0.0+build.5 1.2.0 1.10.0 2.0.0"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{"1", "1.2", "1.2.3.4", "01.2.3", "x.y.z", "", "1.2.3-", "1.2.-3", "1.2.3+",
		"1.2.3-01", "v1.2", "18446744073709551616.0.0", "1.2.3 4"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	v := MustParse(" v18446744073709551615.2.3-rc.1+build.7 ")
	if v.Major() != 18446744073709551615 || v.Minor() != 2 || v.Patch() != 3 || v.Prerelease() != "rc.1" ||
		v.String() != "18446744073709551615.2.3-rc.1+build.7" {
		t.Errorf("parts of %v: %d %d %d %q", v, v.Major(), v.Minor(), v.Patch(), v.Prerelease())
	}
	if a, b := MustParse("1.0.0+a"), MustParse("1.0.0+b"); a.Compare(b) != 0 || a.Less(b) || b.Less(a) {
		t.Errorf("build metadata orders versions: %v vs %v", a, b)
	}
}

func TestSpecGrammar(t *testing.T) {
	t.Parallel()
	all := versions("0.0.1", "0.9.0", "1.0.0", "1.2.0", "1.2.5", "1.3.0", "1.5.0", "1.9.9", "2.0.0", "2.1.0-rc.1", "3.0.0")
	cases := map[string]string{
		">=1.2,<2.0,!=1.5": "1.2.0 1.2.5 1.3.0 1.9.9",
		">=1.2,<2,!=1.5.0": "1.2.0 1.2.5 1.3.0 1.9.9",
		"*":                "0.0.1 0.9.0 1.0.0 1.2.0 1.2.5 1.3.0 1.5.0 1.9.9 2.0.0 2.1.0-rc.1 3.0.0",
		"1":                "1.0.0 1.2.0 1.2.5 1.3.0 1.5.0 1.9.9",
		"1.2":              "1.2.0 1.2.5",
		"1.2.5":            "1.2.5",
		"":                 "0.0.1 0.9.0",
		"==2.0.0":          "2.0.0",
		"=2.0.0":           "2.0.0",
		">2.0.0":           "2.1.0-rc.1 3.0.0",
		"<=1.0.0":          "0.0.1 0.9.0 1.0.0",
		" >= 1.9.9 , < 2 ": "1.9.9",
		"2.1.0-rc.1":       "2.1.0-rc.1",
	}
	for spec, want := range cases {
		s, err := ParseSpec(spec)
		if err != nil {
			t.Errorf("%q: %v", spec, err)
			continue
		}
		if got := join(s.Satisfying(all)); got != want {
			t.Errorf("%q: got %q, want %q", spec, got, want)
		}
	}
	for spec, msg := range map[string]string{
		">=1.2,,<2": "comparator 2 is empty",
		">=1.2,":    "comparator 2 is empty",
		">=x":       "not a number",
		"1.2.3.4":   "more than three",
		">=":        "no version",
		"1.2-rc":    "needs a full version",
		"~1.2":      "not a number",
	} {
		if _, err := ParseSpec(spec); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), spec) {
			t.Errorf("%q: error %v, want one naming the spec and saying %q", spec, err, msg)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	available := versions("1.2.0", "1.2.3", "1.4.0", "1.5.2", "2.0.0")
	for wanted, want := range map[string]string{
		"1.2.3": "1.2.3 exact", "1.2.9": "1.2.3 same-minor", "1.3.0": "1.5.2 same-major", "3.1.0": " none", "2.7.0": "2.0.0 same-major",
	} {
		v, rule := Resolve(MustParse(wanted), available)
		got := string(rule)
		if rule != RuleNone {
			got = v.String() + " " + got
		} else {
			got = " " + got
		}
		if got != want {
			t.Errorf("%s: %q, want %q", wanted, got, want)
		}
	}
}

func TestBumpBetween(t *testing.T) {
	t.Parallel()
	for pair, want := range map[[2]string]string{
		{"1.2.3", "2.0.0"}: "major true", {"1.2.3", "1.3.0"}: "minor true", {"1.2.3", "1.2.4"}: "patch true",
		{"1.2.3", "1.2.3"}: "none true", {"1.2.3", "1.2.2"}: "none false", {"2.0.0", "1.9.0"}: "none false",
	} {
		b, ok := BumpBetween(MustParse(pair[0]), MustParse(pair[1]))
		if got := b.String() + " " + map[bool]string{true: "true", false: "false"}[ok]; got != want {
			t.Errorf("%v: %s, want %s", pair, got, want)
		}
	}
}

// FuzzParseSpec: any text parses or fails with an error, never panics.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{">=1.2,<2.0,!=1.5", "*", "1", "1.2", "", ">=1.2,,<2", "1.2.3-rc.1+b", "v1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s)
		if err == nil {
			spec.Allows(MustParse("1.2.3"))
		}
	})
}
