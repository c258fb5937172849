package reactor

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	w := chain(t)
	e, err := w.reconciler().Explain("a")
	if err != nil {
		t.Fatal(err)
	}
	if e.Dirty || !strings.Contains(e.Why, "memo key unmoved") || len(e.Inputs) != 1 || e.Inputs[0].Moved || e.LastStatus != "rendered" {
		t.Fatalf("%+v", e)
	}
	// A new payload published by hand moves a's input: dirty, and why.
	w.ingestInto(w.reconciler(), "g", map[string]string{"in.json": `{"n":5}`})
	e, _ = w.reconciler().Explain("a")
	if !e.Dirty || e.Why != "inputs moved" || !e.Inputs[0].Moved || e.Inputs[0].Token != w.last("g").Fingerprints["@atomic"] {
		t.Fatalf("%+v", e)
	}
}
