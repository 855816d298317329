package profile

import (
	"errors"
	"fmt"
)

// ErrNotFound matches the errors for a key (kid) or Provider registration
// the profile does not have; the CLI exits 5 on it (CLI contract: not
// found).
var ErrNotFound = errors.New("not found")

// notFoundError is an ErrNotFound with the message shown to the User.
type notFoundError struct{ msg string }

func (e notFoundError) Error() string        { return e.msg }
func (e notFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(format string, args ...any) error {
	return notFoundError{fmt.Sprintf(format, args...)}
}
