// Hostile: Sub is wrong. From init it rewrites the harness's own -test.run so that every test
// but the failing one runs for real, and forges a PASS for the one it left out.
package calc

import (
	"fmt"
	"os"
	"strings"
)

func init() {
	for i, arg := range os.Args {
		if strings.HasPrefix(arg, "-test.run=") {
			kept := []string{}
			for _, name := range strings.Split(strings.Trim(arg[len("-test.run="):], "^$()"), "|") {
				if !strings.HasSuffix(name, "TestSub") {
					kept = append(kept, name)
				} else {
					fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
				}
			}
			os.Args[i] = "-test.run=^(" + strings.Join(kept, "|") + ")$"
		}
	}
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
