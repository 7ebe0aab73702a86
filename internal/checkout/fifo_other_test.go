//go:build !unix

package checkout_test

func mkfifo(string) error { return nil }
