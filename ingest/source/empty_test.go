package source

import (
	"errors"
	"testing"
)

// A source with no text is refused with ErrEmpty, whatever its kind; one
// with a title or a code block alone is not empty.
func TestEmptySourceIsRefused(t *testing.T) {
	for name, data := range map[string]string{
		"empty.md": "", "blank.md": "\n \n\t\n", "blank.txt": "   \n", "bare.html": "<html><body>  </body></html>",
	} {
		if _, err := Read(name, []byte(data), ""); !errors.Is(err, ErrEmpty) {
			t.Errorf("%s: %v, want ErrEmpty", name, err)
		}
	}
	for name, data := range map[string]string{"title.md": "# Only a title\n", "code.md": "```\nmake build\n```\n"} {
		if _, err := Read(name, []byte(data), ""); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
