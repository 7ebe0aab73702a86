package publishplan

// State of one asset at one destination.
type State string

// States reported as publishing proceeds; Present, Published, Failed and Skipped are final.
const (
	Checking  State = "checking"
	Present   State = "present"   // already published, nothing to do
	Missing   State = "missing"   // dry run: would be published
	Packaging State = "packaging" // zipping (once per asset)
	Uploading State = "uploading"
	Published State = "published"
	Failed    State = "failed"
	Skipped   State = "skipped" // not attempted: an earlier failure stopped the run
)

// Outcome of one asset at one destination.
type Outcome struct {
	Asset       string `json:"asset"`
	Manifest    string `json:"manifest"`
	Destination string `json:"destination"`
	Target      string `json:"target"` // s3://bucket/key or repository:tag
	Store       string `json:"store"`  // s3://bucket or the repository: where the totals are kept
	State       State  `json:"state"`
	Bytes       int64  `json:"bytes,omitempty"`
	Error       string `json:"error,omitempty"`
	Note        string `json:"note,omitempty"` // e.g. leftovers of an earlier run cleaned up
}

// Summary of a run, one outcome per asset × destination in plan order.
type Summary struct {
	Outcomes []Outcome `json:"outcomes"`
}

// Count returns how many outcomes are in state s.
func (s Summary) Count(st State) int {
	n := 0
	for _, o := range s.Outcomes {
		if o.State == st {
			n++
		}
	}
	return n
}

// StoreTotals counts outcomes by state in one bucket or repository.
type StoreTotals struct {
	Store  string        `json:"store"`
	Counts map[State]int `json:"counts"`
}

// ByStore totals the outcomes per bucket or repository, in order of first appearance: what a
// user checks per account and region.
func (s Summary) ByStore() []StoreTotals {
	out := []StoreTotals{}
	at := map[string]int{}
	for _, o := range s.Outcomes {
		i, ok := at[o.Store]
		if !ok {
			i = len(out)
			at[o.Store] = i
			out = append(out, StoreTotals{Store: o.Store, Counts: map[State]int{}})
		}
		out[i].Counts[o.State]++
	}
	return out
}

// Event reports progress of one asset at one destination (Destination is empty for events of
// the asset as a whole, such as packaging).
type Event struct {
	Asset       string
	Destination string
	State       State
	Bytes       int64 // the object's size, once known
	// Sent is set on progress events of an upload (State Uploading, Sent > 0): bytes read
	// from the body so far, at most once per MiB.
	Sent int64
	Err  error
}
