package cli

import (
	"fmt"

	"github.com/cdkbot/cdkbot/internal/ghaction"
	"github.com/cdkbot/cdkbot/internal/render"
)

// cleanRunner is the Actions runtime the action's flows report through, every annotation and
// group title cleaned (render.CleanLines): they name stacks, resources, approvers and AWS's
// reasons, which must neither hide characters nor reorder what the reader sees.
type cleanRunner struct{ *ghaction.Runtime }

func (c cleanRunner) Notice(format string, args ...any) {
	c.Runtime.Notice("%s", render.CleanLines(fmt.Sprintf(format, args...)))
}

func (c cleanRunner) Warning(format string, args ...any) {
	c.Runtime.Warning("%s", render.CleanLines(fmt.Sprintf(format, args...)))
}

func (c cleanRunner) Error(format string, args ...any) {
	c.Runtime.Error("%s", render.CleanLines(fmt.Sprintf(format, args...)))
}

func (c cleanRunner) Group(title string) { c.Runtime.Group(render.Clean(title)) }
