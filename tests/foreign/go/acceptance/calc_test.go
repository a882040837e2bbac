package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Errorf("Sub(5, 3) = %d, want 2", got)
	}
}

// TestMul has subtests: only the top-level test is scored.
func TestMul(t *testing.T) {
	for _, c := range []struct{ a, b, want int }{{2, 3, 6}, {0, 7, 0}} {
		t.Run("case", func(t *testing.T) {
			if got := Mul(c.a, c.b); got != c.want {
				t.Errorf("Mul(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}
