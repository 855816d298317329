package main

import "errors"

// detailedError is an error that adds members to the --json error object
// (e.g. CARD_CHANGED's "old" and "new" pins).
type detailedError interface {
	error
	ErrorDetails() map[string]any
}

// errorDetails adds err's details, if any, to the error object obj.
func errorDetails(obj map[string]any, err error) map[string]any {
	var d detailedError
	if errors.As(err, &d) {
		for k, v := range d.ErrorDetails() {
			if _, taken := obj[k]; !taken {
				obj[k] = v
			}
		}
	}
	return obj
}
