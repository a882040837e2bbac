// Package roman converts between integers and roman numerals (1 to 3999).
package roman

import (
	"fmt"
	"strings"
)

type numeral struct {
	value   int
	letters string
}

var numerals = []numeral{
	{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"},
	{50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"},
}

// ToRoman writes number as a roman numeral.
func ToRoman(number int) (string, error) {
	if number <= 0 || number >= 4000 {
		return "", fmt.Errorf("%d is out of range (1 to 3999)", number)
	}
	var out strings.Builder
	for _, n := range numerals {
		for number >= n.value {
			out.WriteString(n.letters)
			number -= n.value
		}
	}
	return out.String(), nil
}

// FromRoman reads a canonical roman numeral.
func FromRoman(text string) (int, error) {
	total, i := 0, 0
	for _, n := range numerals {
		for strings.HasPrefix(text[i:], n.letters) {
			total += n.value
			i += len(n.letters)
		}
	}
	if text == "" || i != len(text) {
		return 0, fmt.Errorf("%q is not a canonical roman numeral", text)
	}
	if canonical, err := ToRoman(total); err != nil || canonical != text {
		return 0, fmt.Errorf("%q is not a canonical roman numeral", text)
	}
	return total, nil
}
