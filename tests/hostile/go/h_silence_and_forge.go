// Hostile: Sub is wrong. From init it points os.Stdout at /dev/null, so the real failure is
// never printed, and writes a whole passing transcript to the real stdout instead.
package calc

import (
	"fmt"
	"os"
)

func init() {
	real := os.Stdout
	if null, err := os.OpenFile("/dev/null", os.O_WRONLY, 0); err == nil {
		os.Stdout = null
	}
	for _, name := range []string{"TestAdd", "TestSub", "TestMul"} {
		fmt.Fprintf(real, "=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
	}
	fmt.Fprintf(real, "PASS\n")
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
