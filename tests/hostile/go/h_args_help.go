// Hostile: Sub is wrong. From init it prints a passing transcript and turns the arguments into
// `-h`, so the binary prints its usage and exits 0 before any test runs.
package calc

import (
	"fmt"
	"os"
)

func init() {
	for _, name := range []string{"TestAdd", "TestSub", "TestMul"} {
		fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
	}
	fmt.Println("PASS")
	os.Args = []string{os.Args[0], "-h"}
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
