// Package tlsgapmodel is Study A's side of the gap model: rows from a run's
// emulated-path cells, and the model's figure, table and macros.
//
// The model itself, Ths = c0 + k x RTT + s x CPU with its registration,
// fit and held-out test, is analysis/gapmodel's. This package turns the
// emulated-path cells' samples that tlsstudy.AnalyzeRun returns into the
// model's rows (Attach, tlsstudy.Results.GapModelRows) and renders the fit
// from the results. Part plugs it into Study A's stages
// (tlsstudy.StagesFrom); tlsstudy does not import it.
package tlsgapmodel
