package client

import (
	"context"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Decide asks the server to approve, adjust or veto an autoscaler's proposal. A failure to read
// the job or the checkpoint is not an error: the answer then follows req.OnFailure and has
// Failed set. Errors are the caller's (INVALID_ARGUMENT) or the transport's.
func (c *Client) Decide(ctx context.Context, req *pb.DecideRequest) (*pb.DecideResponse, error) {
	return c.api.Decide(ctx, req, callOptions(ctx)...)
}
