//go:build unix

package server

import "syscall"

// fdLimit returns the process's current (soft) limit on open file descriptors.
func fdLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	return uint64(rl.Cur), nil
}
