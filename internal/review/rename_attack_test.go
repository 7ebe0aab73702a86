package review

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdkbot/cdkbot/internal/cfndiff"
)

// A pull request removes ten topics and creates ten, each with 25,000 tags that differ in the
// last one only. Tags compare as a set, so each of the hundred comparisons costs hundreds of
// millions of steps: unbounded, the review would spend minutes (hours, with a few more) after
// the app's synthesis, out of its timeout's reach. The moves' work is bounded: no move (they
// differ), in a moment, and the small resources' moves are still found.
func TestMovesWithHugeSetsAreBounded(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat(`{"Key": "k", "Value": "v"},`, 25_000)
	var old, new []string
	for i := range 10 {
		old = append(old, fmt.Sprintf(`"Old%d": {"Type": "AWS::SNS::Topic", "Properties": {"Tags": [%s {"Key": "old", "Value": "%d"}]}}`, i, pad, i))
		new = append(new, fmt.Sprintf(`"New%d": {"Type": "AWS::SNS::Topic", "Properties": {"Tags": [%s {"Key": "new", "Value": "%d"}]}}`, i, pad, i))
	}
	old = append(old, `"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}`)
	new = append(new, `"QueueV2": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}`)
	s := stackDiff(t, "Data", "", strings.Join(old, ","), strings.Join(new, ","))
	start := time.Now()
	m := Moves([]*cfndiff.StackDiff{s})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if got := moveLines(m); got != "AWS::SQS::Queue Data/Queue -> Data/QueueV2 destroy" {
		t.Errorf("moves %q", got)
	}
}
