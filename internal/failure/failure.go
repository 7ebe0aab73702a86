// Package failure names the kinds of error cdkbot's flows end with: a usage mistake, input it
// cannot accept, an operation of the machine or an outside system that failed, and a negative
// verdict already explained. The pipelines and flows say which kind an error is; the entry
// layer alone maps a kind to an exit code, so no flow needs to know the exit-code table or
// construct the entry layer's errors.
package failure

import (
	"errors"
	"fmt"
)

// Kind is what went wrong, from the user's point of view.
type Kind int

// The kinds, one per exit code of the table in the README ("Exit codes").
const (
	// Operation is a failure of the machine or an outside system (disk, AWS, GitHub, git, synthesis).
	Operation Kind = iota
	// Usage is bad input from the command line or the workflow: flags, inputs, the event.
	Usage
	// Input is input cdkbot cannot accept: a broken template, an unreadable file. The message
	// names the file.
	Input
	// Verdict is a negative verdict (a failed gate, a refused deploy) the flow already explained.
	Verdict
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Usage:
		return "usage"
	case Input:
		return "input"
	case Verdict:
		return "verdict"
	}
	return "operation"
}

// Error is an error of a known kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage error with a formatted message.
func Usagef(format string, args ...any) error {
	return &Error{Kind: Usage, Err: fmt.Errorf(format, args...)}
}

// InputErr marks err as input cdkbot cannot accept.
func InputErr(err error) error { return &Error{Kind: Input, Err: err} }

// Inputf is an input error with a formatted message.
func Inputf(format string, args ...any) error {
	return &Error{Kind: Input, Err: fmt.Errorf(format, args...)}
}

// OperationErr marks err as a failed operation.
func OperationErr(err error) error { return &Error{Kind: Operation, Err: err} }

// Blocked is the negative verdict a flow has already explained (a failing gate, a refused
// deploy): the command fails without more words.
var Blocked error = &Error{Kind: Verdict, Err: errors.New("blocked")}

// kindOnly matches any Error of its kind in errors.Is.
type kindOnly Kind

func (k kindOnly) Error() string { return Kind(k).String() }

// Is makes errors.Is(err, kindOnly(k)) true for an Error of kind k.
func (e *Error) Is(target error) bool {
	k, ok := target.(kindOnly)
	return ok && Kind(k) == e.Kind
}

// Is reports whether err, or any error it wraps, is an Error of kind k: a usage error wrapped
// in an operation error is still a usage error to the exit-code table.
func Is(err error, k Kind) bool { return errors.Is(err, kindOnly(k)) }
