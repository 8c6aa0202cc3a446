package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// newInspectCommand is `preflight inspect`: the operators and states of one checkpoint.
func newInspectCommand() *cobra.Command {
	var output string
	var remote remoteFlags
	cmd := &cobra.Command{
		Use:   "inspect CHECKPOINT",
		Short: "Describe the operators and states of a checkpoint or savepoint",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := parseOutput(output)
			if err != nil {
				return err
			}
			resp, err := inspectReport(cmd, args[0], remote)
			if err != nil {
				return err
			}
			return writeInspect(cmd.OutOrStdout(), format, resp)
		},
	}
	outputFlag(cmd, &output)
	remote.register(cmd)
	return cmd
}

// inspectReport runs an inspection in-process or on the server.
func inspectReport(cmd *cobra.Command, target string, remote remoteFlags) (*pb.InspectCheckpointResponse, error) {
	ctx := cmd.Context()
	if remote.server == "" {
		return runEmbedded(cmd, target, remote.catalogs, func(eng *engine.Engine, in engine.Input) (*pb.InspectCheckpointResponse, error) {
			return eng.Inspect(ctx, in)
		})
	}
	c, err := dial(ctx, remote)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	src := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: target}}
	if !isURI(target) {
		// InspectCheckpoint has no upload form; local files go inline.
		f, _, err := openLocal(target)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errInput, err)
		}
		src = &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: b}}
	}
	return c.Inspect(ctx, &pb.InspectCheckpointRequest{Checkpoint: src})
}
