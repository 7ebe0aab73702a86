//go:build !unix

package cli

import "errors"

// mkfifo: no named pipes in the file system here.
func mkfifo(string) error { return errors.New("named pipes are not files here") }
