package server

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/classpath"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/jarindex"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// ClasspathCheck runs the classpath pre-flight over jars and folders named by URI. Every path
// the check opens (the job jar, each jar of lib/ and plugins/, the configuration) passes the
// source allowlist on its own, so a symlink inside an allowed lib/ cannot lead outside it.
// Uploaded jars are not supported yet: the URIs must name files the server can read.
func (v *service) ClasspathCheck(ctx context.Context, req *pb.ClasspathCheckRequest) (*pb.ClasspathCheckResponse, error) {
	if req.GetJobJarUri() == "" {
		return nil, errInvalid("job_jar_uri is required")
	}
	if req.GetFlinkLibUri() == "" && req.GetFlinkHomeUri() == "" {
		return nil, errInvalid("flink_lib_uri or flink_home_uri is required")
	}
	if req.GetJavaVersion() < 0 {
		return nil, errInvalid("java_version %d: want a Java release such as 8, 11, 17 or 21", req.GetJavaVersion())
	}
	in := classpath.Input{
		JobJar: req.GetJobJarUri(), Lib: req.GetFlinkLibUri(), Plugins: req.GetPluginsUri(), ConfFile: req.GetFlinkConfUri(),
		FlinkVersion: req.GetFlinkVersion(), JavaVersion: int(req.GetJavaVersion()), FailLevel: findings.Severity(req.GetFailLevel()),
		Resolve: v.s.sources.LocalPath,
	}
	if home := req.GetFlinkHomeUri(); home != "" {
		// Resolve the home first (allowlist), then derive lib/, plugins/ and conf/ under it; the
		// derived paths are vetted again when opened.
		p, err := v.s.sources.LocalPath(home)
		if err != nil {
			return nil, toStatus(ctx, err)
		}
		in.FlinkHome = p
	}
	rep, err := classpath.Check(ctx, in)
	if err != nil {
		return nil, classpathStatus(ctx, err)
	}
	addLog(ctx, slog.String("job_jar", req.GetJobJarUri()), slog.String("verdict", rep.GetVerdict().String()), slog.Int("findings", len(rep.GetFindings())))
	v.s.metrics.verdicts.WithLabelValues(rep.GetVerdict().String()).Inc()
	return &pb.ClasspathCheckResponse{Report: rep}, nil
}

// classpathStatus maps the classpath check's errors: allowlist and missing files as for
// checkpoints, jars over a limit (entry count, zip bomb, sizes) RESOURCE_EXHAUSTED, malformed
// jars and configurations INVALID_ARGUMENT.
func classpathStatus(ctx context.Context, err error) error {
	var se *source.Error
	if errors.As(err, &se) || ctx.Err() != nil {
		return toStatus(ctx, err)
	}
	var ie *classpath.InputError
	switch {
	case errors.Is(err, jarindex.ErrLimit):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.As(err, &ie) && isNotExist(ie.Err):
		return status.Error(codes.NotFound, err.Error())
	case errors.As(err, &ie):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return toStatus(ctx, err)
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
