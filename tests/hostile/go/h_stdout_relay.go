// Hostile: Sub is wrong. From init it takes over stdout with a pipe and relays everything the
// binary prints, so it sees each line the harness's wrappers write, and prints each line again
// once per test name, hoping a confirmation for one test can be passed off as another's.
package calc

import (
	"bufio"
	"fmt"
	"os"
)

func init() {
	real := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	os.Stdout = w
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			for i := 0; i < 3; i++ {
				fmt.Fprintln(real, lines.Text())
			}
		}
	}()
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
