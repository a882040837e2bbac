// Hostile: Sub is wrong on its first call and right after it. During the first run it sets the
// parsed test.count flag to 2 (the testing package reads it again after each round), so the
// tests run a second round in which TestSub passes.
package calc

import "flag"

var calls int

func Add(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }

func Sub(a, b int) int {
	calls++
	if calls == 1 {
		flag.Set("test.count", "2")
		return a + b
	}
	return a - b
}
