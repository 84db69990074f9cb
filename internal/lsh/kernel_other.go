//go:build !amd64

package lsh

import "runtime"

// archKernels lists the amd64 kernels as missing, so tests say which kernels they could
// not run on this build.
func archKernels() []kernel {
	why := "amd64 only (this build is GOARCH=" + runtime.GOARCH + ")"
	return []kernel{{name: "avx512", missing: why}, {name: "avx2", missing: why}}
}
