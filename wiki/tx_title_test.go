package wiki

import "testing"

// A page's default title capitalizes its file name's first letter, whole:
// a name starting with a letter of more than one byte stays valid UTF-8.
func TestTitleFromStemKeepsTheFirstLetterWhole(t *testing.T) {
	for stem, want := range map[string]string{"über-uns": "Über uns", "ab": "Ab", "élan_vital": "Élan vital", "ǆungla": "ǅungla", "東京": "東京", "1st-try": "1st try", "": ""} {
		if got := titleFromStem(stem); got != want {
			t.Errorf("titleFromStem(%q) = %q, want %q", stem, got, want)
		}
	}
}
