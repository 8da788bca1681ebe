package frontend

import (
	"fmt"
	"slices"
	"strings"
)

// Suggest returns the candidate closest to name by edit distance (ignoring
// case; a swap of two neighbouring letters counts as one edit), or "" if
// none is close enough to be a plausible typo. A one-letter name is only
// matched by a change of case: any two letters are one edit apart.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", max(1, (len(name)+1)/3)+1
	if len(name) <= 1 {
		bestDist = 1
	}
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		if c == name {
			continue
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats a suggestion as a message suffix.
func didYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf("; did you mean '%s'?", s)
	}
	return ""
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of adjacent characters ("f23" for
// "f32") each count as one edit.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
