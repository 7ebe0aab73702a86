//go:build !windows

package synth

var executableSuffixes = []string{""}
