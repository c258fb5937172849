package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/prose-store/prose/internal/progress"
)

// spinner shows a progress bar of unknown length on stderr while a long
// step runs — on a terminal, after the bar's delay, and never with --json or
// --quiet. A ticker keeps it moving between the step's own reports. stop
// clears it.
func spinner(c *cli.Context, desc string) (bar *progress.Bar, stop func()) {
	if c.Bool("json") || c.Bool("quiet") {
		return &progress.Bar{}, func() {}
	}
	bar = progress.New(c.App.ErrWriter, -1, desc, progress.Steps)
	if !bar.Enabled() {
		return bar, func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				bar.Add(0)
			}
		}
	}()
	return bar, func() {
		close(done)
		bar.Finish()
	}
}

// byteBar is a progress bar of size bytes on stderr (size -1: unknown), with
// the same conditions as spinner.
func byteBar(c *cli.Context, size int64, desc string) *progress.Bar {
	if c.Bool("json") || c.Bool("quiet") {
		return &progress.Bar{}
	}
	return progress.New(c.App.ErrWriter, size, desc, progress.Bytes)
}
