package cas

import (
	"encoding/json"
	"strings"
	"testing"
)

const emptyHex = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" // BLAKE3 of no bytes

func TestParseID(t *testing.T) {
	tests := []struct {
		in      string
		want    string // String() of the result; empty means an error
		errPart string
	}{
		{"blake3:" + emptyHex, "blake3:" + emptyHex, ""},
		{emptyHex, "blake3:" + emptyHex, ""},
		{strings.ToUpper(emptyHex), "blake3:" + emptyHex, ""},
		{"", "", "64 hex digits"},
		{"blake3:", "", "64 hex digits"},
		{"sha256:" + emptyHex, "", "64 hex digits"},
		{"blake3:" + emptyHex[:63], "", "64 hex digits"},
		{"blake3:" + emptyHex + "0", "", "64 hex digits"},
		{"blake3:" + emptyHex[:63] + "g", "", "not hex"},
		{" " + emptyHex[1:], "", "not hex"},
		{"BLAKE3:" + emptyHex, "", "64 hex digits"},
	}
	for _, tt := range tests {
		id, err := ParseID(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseID(%q) = %v, want an error", tt.in, id)
			} else if !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("ParseID(%q) error %q lacks %q", tt.in, err, tt.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseID(%q): %v", tt.in, err)
			continue
		}
		if id.String() != tt.want {
			t.Errorf("ParseID(%q) = %s, want %s", tt.in, id, tt.want)
		}
		if id.Hex() != emptyHex {
			t.Errorf("Hex() = %s", id.Hex())
		}
	}
}

func TestIDText(t *testing.T) {
	id, err := ParseID(emptyHex)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]ID{"obj": id})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"obj":"blake3:`+emptyHex+`"}` {
		t.Errorf("JSON = %s", data)
	}
	var back map[string]ID
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back["obj"] != id {
		t.Errorf("round trip gave %v", back["obj"])
	}
	if err := json.Unmarshal([]byte(`{"obj":"nope"}`), &back); err == nil {
		t.Error("bad ID unmarshalled")
	}
}

func FuzzParseID(f *testing.F) {
	f.Add("blake3:" + emptyHex)
	f.Add(emptyHex)
	f.Add(strings.ToUpper(emptyHex))
	f.Add("blake3:" + emptyHex[:63] + "z")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		str := id.String()
		if !strings.HasPrefix(str, "blake3:") || len(str) != 7+64 || str[7:] != id.Hex() {
			t.Fatalf("String() = %q", str)
		}
		if strings.ToLower(strings.TrimPrefix(s, "blake3:")) != id.Hex() {
			t.Fatalf("ParseID(%q) = %s: not the same digits", s, id)
		}
		again, err := ParseID(str)
		if err != nil || again != id {
			t.Fatalf("ParseID(String()) = %v, %v", again, err)
		}
		again, err = ParseID(id.Hex())
		if err != nil || again != id {
			t.Fatalf("ParseID(Hex()) = %v, %v", again, err)
		}
	})
}
