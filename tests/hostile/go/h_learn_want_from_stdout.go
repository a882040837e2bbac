// Hostile: Sub does not know the answer. From init it adds -test.count=2 and takes stdout over
// with a pipe; it reads the first run's failure ("Sub(5, 3) = 8, want 2") and answers the
// learned `want` in the second run.
package calc

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"
)

var (
	learned = map[string]int{}
	mu      sync.Mutex
	wantRe  = regexp.MustCompile(`Sub\((-?\d+), (-?\d+)\) = -?\d+, want (-?\d+)`)
)

func init() {
	os.Args = append(os.Args, "-test.count=2")
	real := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	os.Stdout = w
	go func() {
		lines := bufio.NewScanner(r)
		for lines.Scan() {
			if m := wantRe.FindStringSubmatch(lines.Text()); m != nil {
				v, _ := strconv.Atoi(m[3])
				mu.Lock()
				learned[m[1]+","+m[2]] = v
				mu.Unlock()
			}
			fmt.Fprintln(real, lines.Text())
		}
	}()
}

func Add(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }

func Sub(a, b int) int {
	key := strconv.Itoa(a) + "," + strconv.Itoa(b)
	for i := 0; i < 30; i++ {
		mu.Lock()
		v, ok := learned[key]
		mu.Unlock()
		if ok {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	return a * 100
}
