package loom

import (
	"errors"
	"sort"
	"strings"
)

// ErrSyntax is the class of errors about malformed Loom text; every *Error
// from the lexer and parser matches it with errors.Is.
var ErrSyntax = errors.New("loom: syntax error")

// ErrInvalid is the class of errors found by the checker (undefined values
// or symbols, duplicates, ill-typed launch configs).
var ErrInvalid = errors.New("loom: invalid module")

// Error is one diagnostic with its source position.
type Error struct {
	Pos   Pos
	Msg   string
	Class error // ErrSyntax or ErrInvalid
}

// Error formats the diagnostic as path:line:col: message.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Is lets errors.Is match the error's class.
func (e *Error) Is(target error) bool { return e.Class != nil && target == e.Class }

// ErrorList is a list of diagnostics, sorted by position by Sort.
type ErrorList []*Error

// Add appends a diagnostic.
func (l *ErrorList) Add(pos Pos, class error, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: msg, Class: class})
}

// Sort orders the list by file, then offset.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Offset < b.Offset
	})
}

// Err returns the list as an error, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error joins all diagnostics, one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap exposes each diagnostic to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}
