// Package wordfreq counts words in a text, most frequent first.
package wordfreq

import (
	"regexp"
	"sort"
	"strings"
)

// WordCount is one word and how often it occurs.
type WordCount struct {
	Word  string
	Count int
}

var wordPattern = regexp.MustCompile(`[a-z']+`)

// TopWords returns the n most frequent words (lower-cased), ties in alphabetical order.
func TopWords(text string, n int) []WordCount {
	if n <= 0 {
		return nil
	}
	counts := map[string]int{}
	for _, raw := range wordPattern.FindAllString(strings.ToLower(text), -1) {
		word := strings.Trim(raw, "'")
		if word != "" {
			counts[word]++
		}
	}
	ranked := make([]WordCount, 0, len(counts))
	for word, count := range counts {
		ranked = append(ranked, WordCount{Word: word, Count: count})
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].Count != ranked[j].Count {
			return ranked[i].Count > ranked[j].Count
		}
		return ranked[i].Word < ranked[j].Word
	})
	if len(ranked) > n {
		ranked = ranked[:n]
	}
	return ranked
}
