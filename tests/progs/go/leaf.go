// leaf.go - e2e target for Go programs (tests/e2e/go.test): 200 goroutines
// each call leaf(a, i) N times (N = os.Args[1], default 1000), with
// a = (g + i) % 10, so a is 5 in a tenth of the calls.  Go's register ABI
// passes a in RAX and i in RBX.  Prints "fives F" (calls with a == 5),
// "calls C" and "sum S", then exits 0.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

//go:noinline
func leaf(a, b int) int {
	return a*3 + b
}

func main() {
	n := 1000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	fives, calls, sum := 0, 0, 0
	for g := 0; g < 200; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s, f := 0, 0
			for i := 0; i < n; i++ {
				a := (g + i) % 10
				if a == 5 {
					f++
				}
				s += leaf(a, i)
			}
			mu.Lock()
			fives += f
			calls += n
			sum += s
			mu.Unlock()
		}(g)
	}
	wg.Wait()
	fmt.Printf("fives %d\ncalls %d\nsum %d\n", fives, calls, sum)
}
