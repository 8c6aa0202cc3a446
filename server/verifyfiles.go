package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/statefiles"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// verify_files (issue #30): the state files a checkpoint references are statted through the
// server's own sources (drivers and allowlist), after the check, never from a cache: files
// change while _metadata stays the same.

// errUploadNotVerified is why an upload's state files are not verified.
var errUploadNotVerified = errors.New("an uploaded _metadata names no folder to resolve its relative files against; check it by URI (the CLI verifies a local file itself)")

// verifyFilesOn is CheckOptions.verify_files, or def when unset (on for Decide and admission,
// off for CheckRescale).
func verifyFilesOn(opts *pb.CheckOptions, def bool) bool {
	if opts != nil && opts.VerifyFiles != nil {
		return opts.GetVerifyFiles()
	}
	return def
}

// verifyFiles verifies the files of the checkpoint read from src (label: the _metadata's URI as
// opened) when opts ask for it (def when unset), within the options' budget (0: defBudget). It
// returns nil when the verification is off or src is neither a URI nor inline bytes.
func (s *Server) verifyFiles(ctx context.Context, src *pb.CheckpointSource, label string, opts *pb.CheckOptions, def bool, defBudget time.Duration) *statefiles.Result {
	if !verifyFilesOn(opts, def) {
		return nil
	}
	budget := defBudget
	if ms := opts.GetVerifyFilesBudgetMs(); ms > 0 {
		budget = time.Duration(ms) * time.Millisecond
	}
	var res *statefiles.Result
	switch x := src.GetSource().(type) {
	case *pb.CheckpointSource_Uri:
		res, _ = statefiles.Check(ctx, s.sources, label, budget)
	case *pb.CheckpointSource_Metadata:
		res, _ = statefiles.CheckReader(ctx, s.sources, bytes.NewReader(x.Metadata), int64(len(x.Metadata)), "", budget)
	default:
		return nil
	}
	sum := res.Summary()
	addLog(ctx, slog.String("verify_files", sum.GetSummary()), slog.Int64("verify_files_ms", res.Elapsed.Milliseconds()))
	return res
}

// withFiles returns rep with the verification's findings and summary (a copy: rep may be
// cached), or rep itself when res is nil.
func withFiles(rep *pb.RescaleReport, res *statefiles.Result, opts *pb.CheckOptions) *pb.RescaleReport {
	if res == nil {
		return rep
	}
	rep = proto.Clone(rep).(*pb.RescaleReport)
	res.Apply(rep, opts.GetFailLevel())
	return rep
}
