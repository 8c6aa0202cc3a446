package cancel

import (
	"context"
	"io"
)

// Reader returns r that fails with ctx's error once ctx ends: a long streamed read (a decode of
// a large _metadata) stops between reads instead of running to the end.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
