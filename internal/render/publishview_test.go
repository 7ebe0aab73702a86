package render

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// The CI log of a publishing run: a line per step, a running count over every asset ×
// destination, names cleaned of what could start a workflow command.
func TestPublishLog(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	l := NewPublishLog(&b, 2)
	for _, e := range []publishplan.Event{
		{Asset: "aaaaaaaaaaaaaaaa", State: publishplan.Packaging},
		{Asset: "aaaaaaaaaaaaaaaa", Destination: "d1", State: publishplan.Uploading, Bytes: 10},
		{Asset: "aaaaaaaaaaaaaaaa", Destination: "d1", State: publishplan.Uploading, Bytes: 10, Sent: 5},
		{Asset: "aaaaaaaaaaaaaaaa", Destination: "d1", State: publishplan.Published},
		{Asset: "b\n::error::x", Destination: "d2", State: publishplan.Failed},
	} {
		l.Event(e)
	}
	want := "cdkbot: zipping aaaaaaaaaaaa\n" +
		"cdkbot: uploading aaaaaaaaaaaa → d1 (10 bytes)\n" +
		"cdkbot: [1/2] aaaaaaaaaaaa → d1: published\n" +
		"cdkbot: [2/2] b\\x0a::error → d2: failed\n"
	if b.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", b.String(), want)
	}
	fails := PublishFailures(publishplan.Summary{Outcomes: []publishplan.Outcome{
		{State: publishplan.Published}, {State: publishplan.Failed, Error: "denied"}}})
	if !slices.Equal(fails, []string{"denied"}) {
		t.Errorf("failures %q", fails)
	}
}
