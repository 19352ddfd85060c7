package main

import "errors"

// Exit statuses that tell a caller (a CI job) what went wrong; any other error exits 1.
const (
	// exitDiffers: compare ran every scenario and some differ.
	exitDiffers = 1
	// exitCouldNotCompare: compare could not make the comparison (a scenario could not be run,
	// the nodes or scenarios could not be read, the run was interrupted).
	exitCouldNotCompare = 2
)

// exitCodeError is an error that names the process's exit status.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }

func exitWith(code int, err error) error { return &exitCodeError{code: code, err: err} }

// exitCode is the process's exit status for an error returned by a command.
func exitCode(err error) int {
	var e *exitCodeError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}
