// Command mapseed measures how a map's random seed moves the instructions of looking up
// 20,000 keys: -variants M independent trials in one process, each a fresh set of K maps
// (each a new seed), one op (20,000 lookups) counted between opStart and opEnd.
package main

import (
	"flag"
	"fmt"
	"strconv"
)

const keys = 20000

func main() {
	k := flag.Int("k", 1, "maps")
	variants := flag.Int("variants", 30, "")
	mode := flag.String("mode", "all", "all: every map holds every key; split: key i only in map i%k")
	flag.Parse()
	names := make([]string, keys)
	for i := range names {
		names[i] = "key-" + strconv.Itoa(i*7919)
	}
	sink := 0
	for range *variants {
		maps := make([]map[string]int, *k)
		for j := range maps {
			maps[j] = map[string]int{}
		}
		for i, n := range names {
			if *mode == "all" {
				for j := range maps {
					maps[j][n] = i
				}
			} else {
				maps[i%*k][n] = i
			}
		}
		op := func() int {
			n := 0
			for i, key := range names {
				n += maps[i%*k][key]
			}
			return n
		}
		sink += op() // warm
		opStart()
		sink += op()
		opEnd()
	}
	fmt.Println(sink)
}

//go:noinline
func opStart() {}

//go:noinline
func opEnd() {}
