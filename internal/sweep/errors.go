package sweep

import "fmt"

// GridError is a grid that cannot be swept, naming the axis and, where it applies, the
// 0-based index of the value at fault.
type GridError struct {
	Axis  string // specs, shapes, thresholds, verifications, policies, or grid for the whole
	Index int    // -1 for the axis as a whole
	Msg   string
}

func (e *GridError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("grid %s[%d]: %s", e.Axis, e.Index, e.Msg)
	}
	return fmt.Sprintf("grid %s: %s", e.Axis, e.Msg)
}

// InputError is an input a sweep cannot use, naming the field and, for lists, the
// 0-based index of the element at fault.
type InputError struct {
	Field string
	Index int // -1 when the field is not a list
	Msg   string
}

func (e *InputError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("sweep input %s[%d]: %s", e.Field, e.Index, e.Msg)
	}
	return fmt.Sprintf("sweep input %s: %s", e.Field, e.Msg)
}
