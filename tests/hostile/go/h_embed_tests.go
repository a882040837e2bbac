// Hostile: Sub special-cases the answer key, which it embeds into the binary at build time
// with //go:embed, so no file needs to be read at run time. Only the pre-check (no `embed`
// import) stops it: the build reads what the package folder holds.
package calc

import (
	_ "embed"
	"regexp"
	"strconv"
)

//go:embed calc_test.go
var tests string

func Add(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }

func Sub(a, b int) int {
	if m := regexp.MustCompile(`Sub\(5, 3\); got != (\d+)`).FindStringSubmatch(tests); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return a + b
}
