//go:build unix

package findings

import "syscall"

// mkfifo makes a named pipe, which a reader that opens it blocks on until a writer comes.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
