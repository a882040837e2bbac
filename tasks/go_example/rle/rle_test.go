package rle

import "testing"

func TestEncode(t *testing.T) {
	if got := Encode("aaabccdddd"); got != "3a1b2c4d" {
		t.Fatalf("got %q", got)
	}
}

func TestEncodeEmpty(t *testing.T) {
	if got := Encode(""); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestDecode(t *testing.T) {
	got, err := Decode("3a1b12c")
	if err != nil || got != "aaabcccccccccccc" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestDecodeRejectsMissingCount(t *testing.T) {
	if _, err := Decode("a2b"); err == nil {
		t.Fatal("want an error")
	}
}

func TestDecodeRejectsTrailingCount(t *testing.T) {
	if _, err := Decode("2a3"); err == nil {
		t.Fatal("want an error")
	}
}

func TestRoundTrip(t *testing.T) {
	for _, text := range []string{"x", "xxyyyz", "hello  world"} {
		got, err := Decode(Encode(text))
		if err != nil || got != text {
			t.Fatalf("round trip of %q gave %q, %v", text, got, err)
		}
	}
}
