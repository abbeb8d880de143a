package netrun

import (
	"reflect"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
)

// The runner writes measured.design with designMeta; the analysis reads
// it as netdata.Design. Every field the analysis reads must be one the
// runner writes, under the same JSON name and of the same type (the
// runner may write more: each scenario's link seed and description).
func TestDesignMetaCarriesNetdataDesign(t *testing.T) {
	sameJSON(t, "design", reflect.TypeFor[netdata.Design](), reflect.TypeFor[designMeta]())
}

func sameJSON(t *testing.T, at string, read, written reflect.Type) {
	t.Helper()
	for read.Kind() == reflect.Slice && written.Kind() == reflect.Slice {
		read, written, at = read.Elem(), written.Elem(), at+"[]"
	}
	if read.Kind() != reflect.Struct || written.Kind() != reflect.Struct {
		if read != written {
			t.Errorf("%s: the analysis reads %v, the runner writes %v", at, read, written)
		}
		return
	}
	byName := map[string]reflect.StructField{}
	for f := range written.Fields() {
		byName[jsonName(f)] = f
	}
	for f := range read.Fields() {
		name := jsonName(f)
		w, ok := byName[name]
		if !ok {
			t.Errorf("%s.%s: the analysis reads it, the runner does not write it", at, name)
			continue
		}
		sameJSON(t, at+"."+name, f.Type, w.Type)
	}
}

func jsonName(f reflect.StructField) string {
	return strings.Split(f.Tag.Get("json"), ",")[0]
}
