package netstudy

import (
	"strings"
	"testing"
)

// Files of before the toolchain column read as go1.27.3; with the column,
// Primary keeps the design's first toolchain.
func TestToolchainColumn(t *testing.T) {
	head := strings.Join(requiredColumns, ",")
	row := "lan,10,X25519,0,true,,1000000,100,200,50,150,0"
	old, err := parseCSV([]byte(head+"\n"+row+"\n"), "old.csv")
	if err != nil || len(old) != 1 || old[0].Toolchain != LegacyToolchain {
		t.Fatalf("legacy file: %v, %+v", err, old)
	}
	body := head + ",toolchain\n" + row + ",go1.24.4\n" + row + ",go1.27.3\n" + row + ",go1.24.4\n"
	rows, err := parseCSV([]byte(body), "new.csv")
	if err != nil {
		t.Fatal(err)
	}
	d := &Design{Toolchains: []string{"go1.24.4", "go1.27.3"}}
	kept, others := d.Primary(rows)
	if len(kept) != 2 || others != 1 || kept[0].Toolchain != "go1.24.4" {
		t.Errorf("Primary kept %d (%+v), left out %d; want 2 and 1", len(kept), kept, others)
	}
	if all, n := (&Design{}).Primary(rows); len(all) != 3 || n != 0 {
		t.Errorf("without toolchains Primary kept %d, left out %d; want all", len(all), n)
	}
	if _, err := parseCSV([]byte(head+",toolchain\n"+row+",\n"), "bad.csv"); err == nil {
		t.Error("an empty toolchain cell was accepted")
	}
}
