// Hostile: Sub is wrong. From init it prints a passing transcript and appends `-test.run=^$`
// (the last flag wins), so no test runs and the binary exits 0.
package calc

import (
	"fmt"
	"os"
)

func init() {
	for _, name := range []string{"TestAdd", "TestSub", "TestMul"} {
		fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
	}
	os.Args = append(os.Args, "-test.run=^$", "-test.v=test2json")
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
