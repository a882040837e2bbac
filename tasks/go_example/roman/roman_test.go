package roman_test

import (
	"testing"

	"portexample/roman"
)

func TestToRomanBasics(t *testing.T) {
	cases := map[int]string{1: "I", 4: "IV", 9: "IX", 14: "XIV", 40: "XL", 90: "XC", 400: "CD"}
	for n, want := range cases {
		got, err := roman.ToRoman(n)
		if err != nil || got != want {
			t.Errorf("ToRoman(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
}

func TestToRomanLarge(t *testing.T) {
	got, err := roman.ToRoman(3999)
	if err != nil || got != "MMMCMXCIX" {
		t.Fatalf("ToRoman(3999) = %q, %v", got, err)
	}
}

func TestToRomanOutOfRange(t *testing.T) {
	for _, n := range []int{0, -1, 4000} {
		if _, err := roman.ToRoman(n); err == nil {
			t.Errorf("ToRoman(%d): want an error", n)
		}
	}
}

func TestFromRomanRoundTrip(t *testing.T) {
	for n := 1; n < 4000; n += 37 {
		text, _ := roman.ToRoman(n)
		got, err := roman.FromRoman(text)
		if err != nil || got != n {
			t.Fatalf("FromRoman(%q) = %d, %v; want %d", text, got, err, n)
		}
	}
}

func TestFromRomanRejectsNonCanonical(t *testing.T) {
	for _, text := range []string{"", "IIII", "VX", "ABC", "MMMM"} {
		if _, err := roman.FromRoman(text); err == nil {
			t.Errorf("FromRoman(%q): want an error", text)
		}
	}
}
