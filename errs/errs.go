// Package errs builds errors whose message is one plain sentence while
// they still match the sentinels and types that classify them.
//
// fmt.Errorf("%w: %w", ErrKind, err) stacks the sentinels' own words in
// front of the message ("invalid brand: insecure URL: …"); New keeps the
// words and the kinds apart.
package errs

// New returns an error with message msg that matches each of kinds under
// errors.Is and errors.As (a kind may be a sentinel or a wrapped error).
func New(msg string, kinds ...error) error {
	return &kindError{msg: msg, kinds: kinds}
}

type kindError struct {
	msg   string
	kinds []error
}

func (e *kindError) Error() string   { return e.msg }
func (e *kindError) Unwrap() []error { return e.kinds }
