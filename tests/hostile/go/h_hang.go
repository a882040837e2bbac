// Hostile: hangs in a test, in a goroutine-spawning busy loop, hoping to outlive the run.
package calc

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a - b }

func Mul(a, b int) int {
	for i := 0; i < 4; i++ {
		go func() {
			for {
			}
		}()
	}
	select {}
}
