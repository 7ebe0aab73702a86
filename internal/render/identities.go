package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cdkbot/cdkbot/internal/review"
)

// The deploy identities of a large app (about 150 bytes a stack) do not fit a comment beside
// the review: past a share of the budget, the review's marker keeps their digest and they go to
// comments of their own, on the same pull request, written by the same identity. The deploy
// trusts those exactly as it trusts the review's comment (only the token's identity's comments
// count), and reads them back whole or refuses: a part missing, stale or altered does not match
// the digest in the review's marker.

// IdentityPrefix starts the hidden comment of a part of a review's deploy identities. It is not
// MarkerPrefix, so nothing that looks for a review's marker takes a part for one.
const IdentityPrefix = "<!-- cdkbot-identities:"

// identityPartLimit bounds one part's body, below GitHub's 65,536 characters.
const identityPartLimit = 60_000

// IdentityPart is the JSON inside a part's hidden comment.
type IdentityPart struct {
	Tool   string            `json:"tool"`
	Key    string            `json:"key"`    // the review's key
	Digest string            `json:"digest"` // IdentitiesDigest of all parts' stacks together
	Part   int               `json:"part"`   // 1-based
	Parts  int               `json:"parts"`
	Stacks map[string]string `json:"stacks"` // review.Identity's encoding by qualified stack id
}

// IdentitiesDigest is the digest of every stack's identity (encoded, by qualified stack id).
func IdentitiesDigest(stacks map[string]string) string {
	h := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(stacks)) {
		fmt.Fprintf(h, "%s\x00%s\n", id, stacks[id])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// identityParts splits the identities, in stack order, into parts whose hidden comment (with
// key) stays within identityPartLimit. A single stack whose id is longer than a part is a part
// alone (GitHub then refuses it, and the deploy, missing it, refuses to deploy).
func identityParts(key string, stacks map[string]string) []map[string]string {
	room := identityPartLimit - 1000 - 6*len(key)
	var parts []map[string]string
	size := 0
	for _, id := range slices.Sorted(maps.Keys(stacks)) {
		k, _ := json.Marshal(id)
		v, _ := json.Marshal(stacks[id])
		n := len(hideDashes(string(k))) + len(hideDashes(string(v))) + 2 // "id":"identity",
		if len(parts) == 0 || size+n > room {
			parts, size = append(parts, map[string]string{}), 0
		}
		parts[len(parts)-1][id] = stacks[id]
		size += n
	}
	return parts
}

// IdentityComments are the comments that hold the report's deploy identities when its review
// comment of budget bytes has only their digest (reviewMarker); none when the identities are in
// the review's marker.
func IdentityComments(r *review.Report, budget int) []string {
	if budget <= 0 {
		budget = GitHubCommentLimit
	}
	m := reviewMarker(r, budget)
	if m.IdentityParts == 0 {
		return nil
	}
	return identityComments(r.Key, review.IdentityStrings(r.Identity))
}

// identityComments are the part comments of the identities of the review keyed key.
func identityComments(key string, stacks map[string]string) []string {
	digest := IdentitiesDigest(stacks)
	parts := identityParts(key, stacks)
	out := make([]string, len(parts))
	for i, p := range parts {
		b, _ := json.Marshal(IdentityPart{Tool: "cdkbot", Key: key, Digest: digest, Part: i + 1,
			Parts: len(parts), Stacks: p})
		out[i] = IdentityPrefix + hideDashes(string(b)) + " -->\n" +
			fmt.Sprintf("<sub>cdkbot keeps the deploy identities of its review here (part %d of %d): "+
				"the merge deploy compares every stack with them.</sub>\n", i+1, len(parts))
	}
	return out
}

// ParseIdentityPart reads the part of deploy identities a comment starts with.
func ParseIdentityPart(body string) (IdentityPart, bool) {
	rest, ok := strings.CutPrefix(body, IdentityPrefix)
	if !ok {
		return IdentityPart{}, false
	}
	end := strings.Index(rest, " -->")
	if end < 0 {
		return IdentityPart{}, false
	}
	var p IdentityPart
	if json.Unmarshal([]byte(rest[:end]), &p) != nil || p.Tool != "cdkbot" || p.Part < 1 || p.Part > p.Parts {
		return IdentityPart{}, false
	}
	return p, true
}

// JoinIdentityParts reads back the deploy identities a marker left out (StacksDigest), from the
// bodies of cdkbot's comments on the pull request, oldest first: the newest of each of its
// parts, which together must have exactly the marker's digest.
func JoinIdentityParts(m Marker, bodies []string) (map[string]string, error) {
	if m.StacksDigest == "" || m.IdentityParts < 1 {
		return nil, fmt.Errorf("its marker names no parts")
	}
	newest := map[int]IdentityPart{}
	for _, b := range bodies {
		p, ok := ParseIdentityPart(b)
		if ok && p.Key == m.Key && p.Digest == m.StacksDigest && p.Parts == m.IdentityParts {
			newest[p.Part] = p
		}
	}
	if len(newest) != m.IdentityParts {
		return nil, fmt.Errorf("%d of its %d parts found", len(newest), m.IdentityParts)
	}
	stacks := map[string]string{}
	for _, p := range newest {
		maps.Copy(stacks, p.Stacks)
	}
	if IdentitiesDigest(stacks) != m.StacksDigest {
		return nil, fmt.Errorf("the parts do not match the digest its marker recorded")
	}
	return stacks, nil
}
