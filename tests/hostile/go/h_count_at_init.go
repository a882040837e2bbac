// Hostile: Sub is wrong on its first call and right after it. From init it adds -test.count=2
// to the harness's arguments, so TestSub runs twice and its second run passes.
package calc

import "os"

var calls int

func init() {
	os.Args = append(os.Args, "-test.count=2")
}

func Add(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }

func Sub(a, b int) int {
	calls++
	if calls == 1 {
		return a + b
	}
	return a - b
}
