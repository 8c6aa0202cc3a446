package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/statefiles"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// verifyFlags are --verify-files and its budget and allowlist (check and decide).
type verifyFlags struct {
	on     bool
	budget time.Duration
	allow  []string
}

// register adds the flags; on is the verb's default (decide: on, check: off).
func (v *verifyFlags) register(cmd *cobra.Command, on bool) {
	fl := cmd.Flags()
	fl.BoolVar(&v.on, "verify-files", on, "stat every state file the checkpoint references (relative handles resolved against its folder) and compare the recorded sizes: missing, truncated or unreadable files are PF210 errors (--verify-files=false turns it off)")
	fl.DurationVar(&v.budget, "verify-files-budget", statefiles.DefaultBudget, "how long --verify-files may take; files not verified by then are counted in a PF211 warning")
	fl.StringArrayVar(&v.allow, "verify-allow", nil, "a folder or bucket prefix (s3://bucket/prefix) whose files --verify-files may stat, besides the checkpoint's job folder (in-process only; repeatable)")
}

// options asks a server for the verification.
func (v *verifyFlags) options(opts *pb.CheckOptions) {
	opts.VerifyFiles = proto.Bool(v.on)
	if v.on {
		opts.VerifyFilesBudgetMs = v.budget.Milliseconds()
	}
}

// run verifies the files of the checkpoint at target in-process, with the user's own access:
// the allowlist is the folder holding the checkpoint's folder (the job's checkpoint folder,
// with shared/ and taskowned/; a bucket for object stores) and --verify-allow. nil when off.
func (v *verifyFlags) run(ctx context.Context, target string) *statefiles.Result {
	if !v.on {
		return nil
	}
	o, err := source.New(source.Config{Allow: append(defaultVerifyAllow(target), v.allow...)})
	if err != nil {
		return &statefiles.Result{Err: err}
	}
	defer o.Close()
	res, _ := statefiles.Check(ctx, o, target, v.budget)
	return res
}

// apply verifies and adds the result to rep.
func (v *verifyFlags) apply(ctx context.Context, target string, rep *pb.RescaleReport, opts *pb.CheckOptions) {
	if res := v.run(ctx, target); res != nil {
		res.Apply(rep, opts.GetFailLevel())
	}
}

// defaultVerifyAllow is the allowlist of an in-process verification of target: for a local
// checkpoint the folder holding its folder; for an object store the bucket, with target's
// query options.
func defaultVerifyAllow(target string) []string {
	if p, local := source.FilePath(target); local {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil
		}
		folder := abs
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			folder = filepath.Dir(abs)
		}
		return []string{filepath.Dir(folder)}
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" || strings.HasPrefix(u.Scheme, "http") {
		return nil
	}
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
	return []string{b.String()}
}

// serverVerifies reports whether a server reads the checkpoint itself (a URI, or one it
// discovers), and so verifies its files; a local file is uploaded and verified here.
func serverVerifies(remote remoteFlags, args []string) bool {
	return remote.server != "" && (len(args) == 0 || isURI(args[0]))
}

// verifyTarget is the checkpoint a report was made of: the one discovery chose, else the
// argument, else the report's source.
func verifyTarget(rep *pb.RescaleReport, args []string) string {
	if u := rep.GetCheckpointChoice().GetUri(); u != "" {
		return u
	}
	if len(args) > 0 {
		return args[0]
	}
	return rep.GetCheckpoint().GetSource()
}
