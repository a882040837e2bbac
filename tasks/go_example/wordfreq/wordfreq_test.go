package wordfreq

import (
	"reflect"
	"testing"
)

func TestTopWordsCountsAndOrders(t *testing.T) {
	got := TopWords("the cat and the hat and the bat", 2)
	want := []WordCount{{Word: "the", Count: 3}, {Word: "and", Count: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTopWordsTiesAreAlphabetical(t *testing.T) {
	got := TopWords("b a c b a c", 3)
	want := []WordCount{{Word: "a", Count: 2}, {Word: "b", Count: 2}, {Word: "c", Count: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTopWordsIgnoresCaseAndPunctuation(t *testing.T) {
	got := TopWords("Go! go, GO... don't 'go'", 2)
	want := []WordCount{{Word: "go", Count: 4}, {Word: "don't", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTopWordsNonPositiveN(t *testing.T) {
	if got := TopWords("a b c", 0); len(got) != 0 {
		t.Fatalf("got %v, want nothing", got)
	}
}

func TestTopWordsFewerWordsThanN(t *testing.T) {
	got := TopWords("one two", 5)
	if len(got) != 2 {
		t.Fatalf("got %v, want 2 entries", got)
	}
}
