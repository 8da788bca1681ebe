package frontend

import (
	"fmt"
	"slices"
	"strings"
)

// suggest returns the candidate closest to name by edit distance (ignoring
// case, then by case-sensitive distance), or "" if none is close enough to
// be a plausible typo.
func suggest(name string, candidates []string) string {
	best, bestDist := "", max(1, (len(name)+1)/3)+1
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
	if s := suggest(name, candidates); s != "" {
		return fmt.Sprintf("; did you mean '%s'?", s)
	}
	return ""
}

func editDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
