//go:build !linux

package readerpool

import "time"

// threadCPU is not available off Linux: it reports false.
func threadCPU() (time.Duration, bool) { return 0, false }
