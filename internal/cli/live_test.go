package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cdkbot/cdkbot/internal/publishplan"
)

func TestLiveDisplayRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	d := newLiveDisplay(&out)
	d.Event(publishplan.Event{Asset: "aaaaaaaaaaaaaaaa", Destination: "dest-1", State: publishplan.Checking})
	d.Event(publishplan.Event{Asset: "bbbbbbbbbbbbbbbb", Destination: "dest-1", State: publishplan.Present})
	d.Event(publishplan.Event{Asset: "aaaaaaaaaaaaaaaa", State: publishplan.Packaging})
	d.mu.Lock()
	first := strings.Join(d.frame(), "\n")
	d.mu.Unlock()
	if first != "packaging  aaaaaaaaaaaa → dest-1\npresent    bbbbbbbbbbbb → dest-1" {
		t.Errorf("frame:\n%s", first)
	}
	d.Event(publishplan.Event{Asset: "aaaaaaaaaaaaaaaa", Destination: "dest-1", State: publishplan.Uploading, Bytes: 4 << 20})
	d.Event(publishplan.Event{Asset: "aaaaaaaaaaaaaaaa", Destination: "dest-1", State: publishplan.Uploading, Bytes: 4 << 20, Sent: 1 << 20})
	d.mu.Lock()
	mid := d.frame()[0]
	d.mu.Unlock()
	if mid != "uploading  aaaaaaaaaaaa → dest-1  1.0 MiB / 4.0 MiB (25%)" {
		t.Errorf("uploading row: %q", mid)
	}
	d.Event(publishplan.Event{Asset: "aaaaaaaaaaaaaaaa", Destination: "dest-1", State: publishplan.Published, Bytes: 4 << 20})
	d.paint.redraw()
	d.stop()
	// Every frame after the first moves up over the previous one and clears each line.
	frames := strings.Split(out.String(), "\x1b[2A")
	last := frames[len(frames)-1]
	if len(frames) < 2 || last != "\x1b[2Kpublished  aaaaaaaaaaaa → dest-1  4.0 MiB\n\x1b[2Kpresent    bbbbbbbbbbbb → dest-1\n" {
		t.Errorf("%d frames, last %q", len(frames), last)
	}
}
