package cas

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prose-store/prose/internal/lock"
)

// graph stores objects and records which children each has.
type graph struct {
	s    *Store
	kids map[ID][]ID
}

func (g *graph) add(t *testing.T, content string, children ...ID) ID {
	t.Helper()
	id := mustPut(t, g.s, content)
	g.kids[id] = children
	return id
}

func (g *graph) children(id ID) ([]ID, error) { return g.kids[id], nil }

func TestGCKeepsReachable(t *testing.T) {
	s := openStore(t)
	g := &graph{s: s, kids: map[ID][]ID{}}
	leaf := g.add(t, "leaf")
	shared := g.add(t, "shared", leaf)
	a := g.add(t, "root a", shared)
	b := g.add(t, "root b", shared, idOf([]byte("missing child")))
	cycle1 := g.add(t, "cycle 1")
	cycle2 := g.add(t, "cycle 2", cycle1)
	g.kids[cycle1] = []ID{cycle2}
	garbage := []ID{g.add(t, "garbage one"), g.add(t, "garbage two, longer"), g.add(t, "orphan child", leaf)}
	var freed int64
	for _, id := range garbage {
		data, _ := s.ReadAll(id)
		freed += int64(len(data))
	}

	stats, err := s.GC(context.Background(), []ID{a, b, cycle1, idOf([]byte("missing root"))}, g.children, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if stats != (GCStats{Kept: 6, Removed: 3, BytesFreed: freed}) {
		t.Errorf("stats = %+v, want kept 6, removed 3, freed %d", stats, freed)
	}
	for _, id := range []ID{leaf, shared, a, b, cycle1, cycle2} {
		if ok, _ := s.Has(id); !ok {
			t.Errorf("reachable %s removed", id)
		}
	}
	for _, id := range garbage {
		if ok, _ := s.Has(id); ok {
			t.Errorf("unreachable %s kept", id)
		}
	}
	assertConsistent(t, s)

	// Only the roots when there is no children function.
	stats, err = s.GC(context.Background(), []ID{a}, nil, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kept != 1 || stats.Removed != 5 {
		t.Errorf("stats = %+v, want kept 1, removed 5", stats)
	}
}

func TestGCChildrenErrorDeletesNothing(t *testing.T) {
	s := openStore(t)
	root := mustPut(t, s, "root")
	mustPut(t, s, "garbage")
	boom := errors.New("cannot parse")
	_, err := s.GC(context.Background(), []ID{root}, func(ID) ([]ID, error) { return nil, boom }, time.Second)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "nothing deleted") || !strings.Contains(err.Error(), root.String()) {
		t.Fatalf("err = %v", err)
	}
	if n := count(t, s); n != 2 {
		t.Errorf("%d objects left, want 2", n)
	}
}

func TestGCCanceled(t *testing.T) {
	s := openStore(t)
	mustPut(t, s, "garbage")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.GC(ctx, nil, nil, time.Second); err == nil {
		t.Fatal("GC with a canceled context succeeded")
	}
	if n := count(t, s); n != 1 {
		t.Errorf("%d objects left, want 1", n)
	}
}

func TestGCWaitsForLock(t *testing.T) {
	s := openStore(t)
	mustPut(t, s, "garbage")
	l, err := lock.TryAcquire(s.LockPath(), "prose publish")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GC(context.Background(), nil, nil, 50*time.Millisecond)
	var held *lock.HeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "prose publish") {
		t.Fatalf("err = %v, want a *lock.HeldError naming the holder", err)
	}
	if n := count(t, s); n != 1 {
		t.Errorf("GC without the lock removed objects")
	}
	l.Release()
	if _, err := s.GC(context.Background(), nil, nil, time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestPutDuringGCKeepsObject: a writer that follows the locking rule and
// puts while GC runs waits for GC, so its object survives.
func TestPutDuringGCKeepsObject(t *testing.T) {
	s := openStore(t)
	root := mustPut(t, s, "root")
	marking := make(chan struct{})
	resume := make(chan struct{})
	children := func(ID) ([]ID, error) {
		close(marking)
		<-resume
		return nil, nil
	}
	gcDone := make(chan error, 1)
	go func() {
		_, err := s.GC(context.Background(), []ID{root}, children, time.Second)
		gcDone <- err
	}()
	<-marking // GC holds the lock now

	putDone := make(chan ID, 1)
	putErr := make(chan error, 1)
	go func() {
		l, err := lock.Acquire(context.Background(), s.LockPath(), 30*time.Second, "writer")
		if err != nil {
			putErr <- err
			return
		}
		defer l.Release()
		id, err := s.PutBytes([]byte("written during gc"))
		if err != nil {
			putErr <- err
			return
		}
		putDone <- id
	}()
	close(resume)
	if err := <-gcDone; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-putErr:
		t.Fatal(err)
	case id := <-putDone:
		if ok, _ := s.Has(id); !ok {
			t.Fatal("object put during GC was lost")
		}
	}
}

func count(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	if err := s.List(func(ID) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func ExampleStore_GC() {
	s, err := Open(exampleDir())
	if err != nil {
		fmt.Println(err)
		return
	}
	keep, _ := s.PutBytes([]byte("referenced"))
	s.PutBytes([]byte("unreferenced"))
	stats, err := s.GC(context.Background(), []ID{keep}, nil, time.Minute)
	fmt.Println(stats.Kept, stats.Removed, stats.BytesFreed, err)
	// Output: 1 1 12 <nil>
}

// TestPutWithoutLockDuringGCSurvives: a Put that holds no writer lock (as
// `prose cas put` does) of an object a GC root names, landing while GC
// marks, is never deleted: the Put waits for the GC to finish, or finishes
// before the mark looks.
func TestPutWithoutLockDuringGCSurvives(t *testing.T) {
	s := openStore(t)
	other := mustPut(t, s, "present root")
	content := []byte("put while gc runs")
	x := idOf(content)
	// The GC's mark calls children on the present root; there the Put runs,
	// and the mark goes on once the Put has finished or waits for the GC.
	putDone := make(chan error, 1)
	waiting := make(chan struct{}, 1)
	putGateWaits = func() { waiting <- struct{}{} }
	defer func() { putGateWaits = nil }()
	children := func(id ID) ([]ID, error) {
		if id == other {
			go func() {
				_, err := s.PutBytes(content)
				putDone <- err
			}()
			select {
			case err := <-putDone:
				putDone <- err // acknowledged before the sweep
			case <-waiting:
			}
		}
		return nil, nil
	}
	if _, err := s.GC(context.Background(), []ID{other, x}, children, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-putDone; err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Has(x); !ok {
		t.Fatal("an acknowledged Put of a GC root was deleted by the concurrent GC")
	}
}

// TestConcurrentPutAndGC runs Puts and GCs of the same root side by side:
// every acknowledged Put leaves its object in the store.
func TestConcurrentPutAndGC(t *testing.T) {
	s := openStore(t)
	for i := range 200 {
		content := []byte(fmt.Sprintf("object %d", i))
		x := idOf(content)
		gcDone := make(chan error, 1)
		go func() {
			_, err := s.GC(context.Background(), []ID{x}, nil, 10*time.Second)
			gcDone <- err
		}()
		if _, err := s.PutBytes(content); err != nil {
			t.Fatal(err)
		}
		if err := <-gcDone; err != nil {
			t.Fatal(err)
		}
		if ok, _ := s.Has(x); !ok {
			t.Fatalf("round %d: the object put beside gc --root %s is gone", i, x)
		}
	}
}
