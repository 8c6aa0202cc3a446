package client

import (
	"context"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Classpath runs a classpath pre-flight on the server: the jars are named by URIs inside the
// server's allowlist.
func (c *Client) Classpath(ctx context.Context, req *pb.ClasspathCheckRequest) (*pb.ClasspathReport, error) {
	resp, err := c.api.ClasspathCheck(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.GetReport(), nil
}
