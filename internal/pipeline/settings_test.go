package pipeline

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplitList(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":                     nil,
		"a":                    {"a"},
		" a, b ,,c ":           {"a", "b", "c"},
		"lambda/\nshared/x.ts": {"lambda/", "shared/x.ts"},
		"dir with space/":      {"dir with space/"},
	} {
		if got := SplitList(in); !slices.Equal(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every door starts from the same defaults: the table's, each parsed by its own parser.
func TestDefaultReviewOptions(t *testing.T) {
	t.Parallel()
	o := DefaultReviewOptions()
	if !slices.Equal(o.FailOn, DefaultFailOn) || o.OverrideLabel != DefaultOverrideLabel || o.SynthConcurrency != 2 ||
		o.SynthTimeout != 10*time.Minute || o.SecuritySeverity != "high" || o.Deployed != DeployedAuto || o.BaseFailure != "fail" ||
		o.Comment != CommentSticky || o.ShowAssetChanges || o.ResultLabels {
		t.Errorf("defaults: %+v", o)
	}
	seen := map[string]bool{}
	for _, s := range ReviewSettings {
		if seen[s.Name] || s.Usage == "" || s.Set == nil {
			t.Errorf("setting %q: duplicate, or without usage or parser", s.Name)
		}
		seen[s.Name] = true
	}
}

// A value no parser accepts is refused with what to give instead; the options are untouched.
func TestReviewSettingsRefuse(t *testing.T) {
	t.Parallel()
	for name, values := range map[string][]string{
		"synth-concurrency": {"0", "-1", "two", "1.5"},
		"synth-timeout":     {"soon", "0s", "-5m"},
	} {
		for _, v := range values {
			o := DefaultReviewOptions()
			if err := ReviewSetting(name).Set(&o, v); err == nil {
				t.Errorf("%s %q accepted", name, v)
			}
			if o.SynthConcurrency != 2 || o.SynthTimeout != 10*time.Minute {
				t.Errorf("%s %q changed the options: %+v", name, v, o)
			}
		}
	}
	o := DefaultReviewOptions()
	if err := ReviewSetting("synth-inputs").Set(&o, "../lambda\n../shared"); err != nil || !slices.Equal(o.SynthInputs, []string{"../lambda", "../shared"}) {
		t.Errorf("synth-inputs: %q %v", o.SynthInputs, err)
	}
}

// The posting settings take their words and nothing else: a misspelt comment mode is refused with
// the words there are, never taken as the sticky comment.
func TestPostingSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		check       func(o ReviewOptions) bool
	}{
		{"comment", "changes", func(o ReviewOptions) bool { return o.Comment == CommentChanges }},
		{"comment", "new", func(o ReviewOptions) bool { return o.Comment == CommentNew }},
		{"comment", "off", func(o ReviewOptions) bool { return o.Comment == CommentOff }},
		{"asset-changes", "show", func(o ReviewOptions) bool { return o.ShowAssetChanges }},
		{"result-labels", "on", func(o ReviewOptions) bool { return o.ResultLabels }},
	} {
		o := DefaultReviewOptions()
		if err := ReviewSetting(tc.name).Set(&o, tc.value); err != nil || !tc.check(o) {
			t.Errorf("%s %q: %v %+v", tc.name, tc.value, err, o)
		}
	}
	for name, values := range map[string][]string{
		"comment":       {"Sticky", "change", "true", "none", " sticky"},
		"asset-changes": {"hide", "true"},
		"result-labels": {"true", "yes", "ON"},
	} {
		for _, v := range values {
			o := DefaultReviewOptions()
			err := ReviewSetting(name).Set(&o, v)
			if err == nil || !strings.HasPrefix(err.Error(), "use ") {
				t.Errorf("%s %q: %v", name, v, err)
			}
			if o.Comment != CommentSticky || o.ShowAssetChanges || o.ResultLabels {
				t.Errorf("%s %q changed the options: %+v", name, v, o)
			}
		}
	}
	if err := ReviewSetting("comment").Set(new(ReviewOptions), "stickyy"); err == nil ||
		err.Error() != "use sticky, new, changes or off" {
		t.Errorf("comment: %v", err)
	}
}
