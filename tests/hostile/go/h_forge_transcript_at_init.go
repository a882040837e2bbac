// Hostile: from init, prints a complete passing transcript for every test and exits 0. Only
// the static pre-check stops it: in-process code can say anything the test binary can.
package calc

import (
	"fmt"
	"os"
)

func init() {
	for _, name := range []string{"TestAdd", "TestSub", "TestMul"} {
		fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
	}
	fmt.Printf("PASS\n")
	os.Exit(0)
}

func Add(a, b int) int { return 0 }
func Sub(a, b int) int { return 0 }
func Mul(a, b int) int { return 0 }
