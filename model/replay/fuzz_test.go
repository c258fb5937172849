package replay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prose-store/prose/model"
)

// FuzzLoad: any file parses or is refused with an error; a loaded
// recording's first request compares equal to itself.
func FuzzLoad(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "loop.recording.json"))
	f.Add(seed)
	f.Add([]byte(`{"prose_recording":1,"model":"m","exchanges":[{"request":{"messages":null},"response":{"usage":{"input":0,"cached_input":0,"output":0},"stop_reason":"end"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz", data)
		if err != nil {
			if model.KindOf(err) != model.KindConfig {
				t.Fatalf("error of kind %q", model.KindOf(err))
			}
			return
		}
		for _, ex := range file.Exchanges {
			if ptr, _, _, same := FirstDifference(ex.Request, ex.Request); !same {
				t.Fatalf("a request differs from itself at %s", ptr)
			}
			_ = ex.Response.Model()
		}
	})
}
