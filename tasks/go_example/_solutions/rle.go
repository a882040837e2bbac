// Package rle run-length encodes text: "aaab" <-> "3a1b".
package rle

import (
	"errors"
	"strconv"
	"strings"
)

// Encode writes each run of a character as its length then the character.
func Encode(text string) string {
	runes := []rune(text)
	var out strings.Builder
	for i := 0; i < len(runes); {
		j := i
		for j < len(runes) && runes[j] == runes[i] {
			j++
		}
		out.WriteString(strconv.Itoa(j - i))
		out.WriteRune(runes[i])
		i = j
	}
	return out.String()
}

// Decode reverses Encode; a character without a count, or a count at the end, is an error.
func Decode(text string) (string, error) {
	var out strings.Builder
	count := ""
	for _, ch := range text {
		if ch >= '0' && ch <= '9' {
			count += string(ch)
			continue
		}
		if count == "" {
			return "", errors.New("missing count before " + strconv.QuoteRune(ch))
		}
		n, err := strconv.Atoi(count)
		if err != nil {
			return "", err
		}
		out.WriteString(strings.Repeat(string(ch), n))
		count = ""
	}
	if count != "" {
		return "", errors.New("trailing count")
	}
	return out.String(), nil
}
