package tlsgapmodel

import (
	"fmt"
	"slices"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/stats"
	"pqrepro/datasets/tlsdata"
)

// span returns the record's Ths (ms) under a registered definition
// (gapmodel.Definitions), and false when the record lacks a time it
// needs. The second ClientHello starts ch2-cfin only after a
// HelloRetryRequest; without one it is the only ClientHello.
func span(r *tlsdata.Record, def gapmodel.Definition) (float64, bool) {
	syn, ch, ch2, slast, cfin := r.SynNs, r.ClientHelloNs, r.ClientHello2Ns, r.ServerFlightEndNs, r.ClientFinishedNs
	if def.End == "server" {
		syn, ch, ch2, slast, cfin = r.SrvSynNs, r.SrvClientHelloNs, r.SrvClientHello2Ns, r.SrvServerFlightEndNs, r.SrvClientFinishedNs
	}
	if !r.HRR {
		ch2 = ch
	}
	var start, stop *int64
	switch def.Name {
	case "ch-cfin":
		start, stop = ch, cfin
	case "ch-slast":
		start, stop = ch, slast
	case "ch2-cfin":
		start, stop = ch2, cfin
	case "syn-cfin":
		start, stop = syn, cfin
	}
	if start == nil || stop == nil || *stop <= *start {
		return 0, false
	}
	return float64(*stop-*start) / 1e6, true
}

// thsByDefinition is the cell's median over rounds of its per-round median
// Ths under each registered definition that every record gives. missing
// says, per definition not given, how many records lack it.
func thsByDefinition(recs []*tlsdata.Record, rounds []int) (ths map[string]float64, missing map[string]int) {
	ths, missing = map[string]float64{}, map[string]int{}
	for _, def := range gapmodel.Definitions {
		byRound := map[int][]float64{}
		n := 0
		for i, r := range recs {
			v, ok := span(r, def)
			if !ok {
				n++
				continue
			}
			byRound[rounds[i]] = append(byRound[rounds[i]], v)
		}
		if n > 0 || len(byRound) == 0 {
			missing[def.Key()] = max(n, 1)
			continue
		}
		var meds []float64
		for _, x := range byRound {
			m, _ := stats.Median(x)
			meds = append(meds, m)
		}
		ths[def.Key()], _ = stats.Median(meds)
	}
	return ths, missing
}

// givenDefinitions returns the definitions every row gives, in registered
// order, and for each other one why not: the first row that lacks it and
// how many records there lack its times.
func givenDefinitions(rows []rowWithGaps) (given []string, why map[string]string) {
	why = map[string]string{}
	for _, def := range gapmodel.Definitions {
		k := def.Key()
		lacking := 0
		first := ""
		for _, r := range rows {
			if n, ok := r.missing[k]; ok {
				lacking++
				if first == "" {
					first = fmt.Sprintf("cell %s: %d record(s) lack its times", r.label, n)
				}
			}
		}
		switch {
		case lacking == 0:
			given = append(given, k)
		case def.End == "server" && !slices.ContainsFunc(rows, func(r rowWithGaps) bool { return !r.serverless }):
			why[k] = "the run captured the client's end only"
		case lacking == len(rows):
			why[k] = fmt.Sprintf("no cell gives it; %s", first)
		default:
			why[k] = fmt.Sprintf("%d of %d cells lack it; %s", lacking, len(rows), first)
		}
	}
	return given, why
}

// rowWithGaps is what one row's records lack.
type rowWithGaps struct {
	label      string // the row's (gapmodel.Row.Label)
	missing    map[string]int
	serverless bool // no record of the cell has a server-end time
}
