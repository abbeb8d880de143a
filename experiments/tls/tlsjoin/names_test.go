package tlsjoin

// Cross-checks of Study A's dataset format (datasets/tlsdata) against the
// code that produces its values: they live here, beside the join, so that
// the dataset package depends on no experiment.

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
)

// The cert key and group names are the ones the experiment prints.
func TestNamesMatchHandshake(t *testing.T) {
	var keys []string
	for _, k := range handshake.CertKeys {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	ours := slices.Sorted(slices.Values(tlsdata.KnownCertKeys))
	if !slices.Equal(keys, ours) {
		t.Errorf("KnownCertKeys %v, handshake.CertKeys %v", ours, keys)
	}
	var groups []string
	for _, g := range handshake.Groups {
		groups = append(groups, g.String())
	}
	slices.Sort(groups)
	if og := slices.Sorted(slices.Values(tlsdata.KnownGroups)); !slices.Equal(groups, og) {
		t.Errorf("KnownGroups %v, handshake.Groups %v", og, groups)
	}
}

// The capture columns are capture.Record's JSON fields, in order, with
// "group" renamed negotiated_group (it is the capture's view, not the
// configured group), but client_hello2_ns: a column of ColumnsServerEnd
// only, so that older runs keep their header.
func TestCaptureColumnsFollowCaptureRecord(t *testing.T) {
	var want []string
	rt := reflect.TypeFor[capture.Record]()
	for i := range rt.NumField() {
		tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if tag == "group" {
			tag = "negotiated_group"
		}
		if tag == "client_hello2_ns" {
			if !slices.Contains(tlsdata.ColumnsServerEnd, tag) || slices.Contains(tlsdata.Columns, tag) {
				t.Errorf("%s: want it in ColumnsServerEnd only", tag)
			}
			continue
		}
		want = append(want, tag)
	}
	got := tlsdata.Columns[slices.Index(tlsdata.Columns, "client"):slices.Index(tlsdata.Columns, "inproc_client_ns")]
	if !slices.Equal(got, want) {
		t.Fatalf("capture columns\n got %v\nwant %v", got, want)
	}
}
