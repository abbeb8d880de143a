package pipeline

import (
	"fmt"

	"pqrepro/analysis/agreement"
	"pqrepro/reproduce"
)

// Results are one run's results decoded by its study's analysis package
// (reproduce.Results).
type Results = reproduce.Results

// resultsOf is a study's Results over T, its analysis package's results
// type. Decode is its one decoder (strict: a field renamed in the
// analysis stops the comparison rather than turn every item "absent"),
// Items its CompareItems; Changes and Resampler may be nil, Method says
// how Resampler draws.
type resultsOf[T any] struct {
	Decode    func(name string, b []byte) (*T, error)
	Items     func(ref, now *T) []agreement.Item
	Changes   func(ref *T) []agreement.Change
	Resampler func(ref *T) agreement.Resampler
	Method    string
}

// decode is the Study.Results hook: it decodes b once.
func (h resultsOf[T]) decode(name string, b []byte) (Results, error) {
	v, err := h.Decode(name, b)
	if err != nil {
		return nil, err
	}
	return decoded[T]{h: h, v: v}, nil
}

// decoded is one run's results of type T with its study's functions.
type decoded[T any] struct {
	h resultsOf[T]
	v *T
}

func (d decoded[T]) Items(now Results) ([]agreement.Item, error) {
	n, ok := now.(decoded[T])
	if !ok {
		return nil, fmt.Errorf("results of type %T compared with %T: two studies' results", d.v, now)
	}
	return d.h.Items(d.v, n.v), nil
}

func (d decoded[T]) Changes() []agreement.Change {
	if d.h.Changes == nil {
		return nil
	}
	return d.h.Changes(d.v)
}

func (d decoded[T]) Resampler() (agreement.Resampler, string) {
	if d.h.Resampler == nil {
		return nil, ""
	}
	return d.h.Resampler(d.v), d.h.Method
}
