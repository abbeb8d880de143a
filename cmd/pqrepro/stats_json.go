package main

import (
	"encoding/json"
	"io"
)

// newJSONEncoder returns the encoder shared by the statistics commands:
// two-space indentation, no HTML escaping (sample names are file paths).
func newJSONEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}
