package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/cdkbot/cdkbot/internal/pipeline"
	"github.com/cdkbot/cdkbot/internal/review"
)

// gatesUsage is a --fail-on flag's usage: what the gates do, then every gate the review
// evaluates, from the list the review itself uses (the flag's default lists those on by default).
func gatesUsage(what string) string {
	return what + ": " + strings.Join(review.AllGates, ", ") + " (" + review.GateDrift + " needs AWS credentials)"
}

// settingValue is a flag over a pipeline setting: the flag parses with the setting's parser
// and starts at its default, as the action's input does.
type settingValue[O any] struct {
	s    pipeline.Setting[O]
	o    *O
	raw  []string // the list values given so far: a repeated list flag adds to the list
	text string
}

func (v *settingValue[O]) String() string {
	if v.s.Kind == pipeline.List && v.text != "" {
		return "[" + v.text + "]" // as pflag shows a list; an empty one shows no default
	}
	return v.text
}

func (v *settingValue[O]) Type() string { return string(v.s.Kind) }

func (v *settingValue[O]) Set(x string) error {
	if v.s.Kind == pipeline.List {
		v.raw = append(v.raw, x)
		x = strings.Join(v.raw, ",")
	}
	if err := v.s.Set(v.o, x); err != nil {
		return err
	}
	v.text = x
	return nil
}

// addSettings adds a flag for each named setting of table to cmd, storing into o, at the
// setting's default; usage, when given for a name, replaces the setting's own words there.
func addSettings[O any](
	cmd *cobra.Command, o *O, table []pipeline.Setting[O], usage map[string]string, names ...string,
) {
	for _, name := range names {
		for _, s := range table {
			if s.Name != name {
				continue
			}
			v := &settingValue[O]{s: s, o: o}
			if s.Default != "" {
				if err := s.Set(o, s.Default); err != nil {
					panic("setting " + s.Name + ": bad default: " + err.Error())
				}
				v.text = s.Default
			}
			u := s.Usage
			if w, ok := usage[name]; ok {
				u = w
			}
			cmd.Flags().Var(v, s.Name, u)
		}
	}
}
