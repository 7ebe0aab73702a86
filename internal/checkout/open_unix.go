//go:build unix

package checkout

import (
	"os"
	"syscall"
)

// openFlags open a named pipe without waiting for a writer, and a terminal without making it
// cdkbot's; either is then refused as not a regular file.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
