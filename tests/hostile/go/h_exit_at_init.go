// Hostile: exits 0 from init, before any test runs, hoping no news reads as good news.
package calc

import "os"

func init() { os.Exit(0) }

func Add(a, b int) int { return 0 }
func Sub(a, b int) int { return 0 }
func Mul(a, b int) int { return 0 }
