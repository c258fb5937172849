package lazyre

import (
	"sync"
	"testing"
)

func TestCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+b$`)
	var wg sync.WaitGroup
	got := make(chan any, 8)
	for i := 0; i < 8; i++ {
		wg.Go(func() { got <- re() })
	}
	wg.Wait()
	close(got)
	first := re()
	for r := range got {
		if r != first {
			t.Fatal("New's function returned two different *regexp.Regexp")
		}
	}
	if !first.MatchString("aab") || first.MatchString("ab ") {
		t.Fatal("the compiled expression does not match as written")
	}
}

func TestABadExpressionPanicsAtFirstUse(t *testing.T) {
	re := New(`(`) // no panic here
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic at first use")
		}
	}()
	re()
}
