//go:build windows

package synth

var executableSuffixes = []string{".exe", ".cmd", ".bat", ""}
