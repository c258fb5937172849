// Package ctxio makes a long copy stop when its context ends.
package ctxio

import (
	"context"
	"io"
)

// Reader returns a reader of r that fails with ctx's error, before reading,
// once ctx is done: a copy through it stops within one read of a Ctrl-C.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r // never cancelled
	}
	return &reader{ctx: ctx, r: r}
}

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c *reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
