package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// checkpointReport runs a check in-process or on the server. chart asks for the per-subtask
// rows of the text report's chart: in-process only those rows are computed
// (engine.SubtasksForChart; the text report shows no other rows, so opts.include_subtasks
// does not change it); the server is asked for the same rows (chart_subtasks).
//
// table, when not nil, receives the operators table of an in-process check, row by row
// (engine.Request.Each): the report then keeps only the operators the text or Markdown shows
// besides the table, so that a million operators cost their rows' text, not their messages;
// write it with report.WriteTextLimited or report.WriteMarkdownTable when table.Len() > 0.
func checkpointReport(cmd *cobra.Command, target string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags, chart bool,
	table *report.OperatorTable) (*pb.RescaleReport, error) {
	ctx := cmd.Context()
	if remote.server == "" {
		return runEmbedded(cmd, target, remote, func(eng *engine.Engine, in engine.Input) (*pb.RescaleReport, error) {
			req := engine.Request{Input: in, Plan: plan, Options: opts}
			if chart {
				req.Detail = engine.SubtasksForChart
			}
			if table != nil {
				req.Each = table.Add
			}
			return eng.Check(ctx, req)
		})
	}
	askChartRows(opts, chart)
	var j client.Joiner
	if err := remoteCheck(cmd, target, plan, opts, remote, j.Add); err != nil {
		return nil, err
	}
	return j.Report(), nil
}

// askChartRows asks a server for the rows the text report's chart draws (chart_subtasks) when
// chart is set, unless opts asks for every subtask.
func askChartRows(opts *pb.CheckOptions, chart bool) {
	if chart && !opts.GetIncludeSubtasks() {
		opts.ChartSubtasks = true
	}
}

// spilledReport asks the server for the report of a check whose operators can be far larger
// than the file (include_subtasks: every subtask of a UNION operator lists every old subtask;
// bench/README.md, "Subtask detail streamed end to end") and spills their pages to a temporary
// file as they arrive (report.WriteJSONSpilled writes them after the verdict and findings, which
// come last). The report returned has the findings and no operators; close the spill once
// written.
func spilledReport(cmd *cobra.Command, target string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags) (*pb.RescaleReport, *report.OperatorSpill, error) {
	return spillPieces(func(fn func(*pb.ReportPiece) error) error { return remoteCheck(cmd, target, plan, opts, remote, fn) })
}

// newOperatorSpill creates a spill (a variable so that tests can see which checks spill).
var newOperatorSpill = report.NewOperatorSpill

// spillPieces runs check, spilling the operator pages of its answer and joining the rest (see
// spilledReport).
func spillPieces(check func(fn func(*pb.ReportPiece) error) error) (*pb.RescaleReport, *report.OperatorSpill, error) {
	spill, err := newOperatorSpill()
	if err != nil {
		return nil, nil, err
	}
	var rest client.Joiner
	err = check(func(p *pb.ReportPiece) error {
		if page := p.GetOperators(); page != nil {
			return spill.AddPage(page)
		}
		return rest.Add(p)
	})
	if err != nil {
		spill.Close()
		return nil, nil, err
	}
	return rest.Report(), spill, nil
}

// spilledEmbeddedReport checks target in-process with its operators spilled as they are
// checked (checkSpilled) instead of kept in the report, for JSON: a million operators' messages
// take as much memory as the Layout they are checked against (bench/README.md, "Many operators:
// one finding per rule and cause"). The caller writes the report with report.WriteJSONSpilled
// and closes the spill.
func spilledEmbeddedReport(cmd *cobra.Command, target string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags) (*pb.RescaleReport, *report.OperatorSpill, error) {
	return checkSpilled(func(pieces engine.OperatorPieces) (*pb.RescaleReport, error) {
		return runEmbedded(cmd, target, remote, func(eng *engine.Engine, in engine.Input) (*pb.RescaleReport, error) {
			return eng.Check(cmd.Context(), engine.Request{Input: in, Plan: plan, Options: opts, Pieces: pieces, StatesInPieces: pieces != nil})
		})
	})
}

// checkSpilled runs an in-process check whose operators go to a new spill as they are converted
// (check's engine.Request.Pieces, with StatesInPieces), or, without a temporary folder, a check
// that keeps them in the report (pieces nil; the spill returned nil). The spill is closed if the
// check fails.
func checkSpilled(check func(pieces engine.OperatorPieces) (*pb.RescaleReport, error)) (*pb.RescaleReport, *report.OperatorSpill, error) {
	spill, err := newOperatorSpill()
	if err != nil {
		rep, err := check(nil)
		return rep, nil, err
	}
	rep, err := check(func(op *pb.OperatorAssignment, continued bool) error {
		return spill.AddPage(&pb.OperatorPage{Operators: []*pb.OperatorAssignment{op}, Continued: continued})
	})
	if err != nil {
		spill.Close()
		return nil, nil, err
	}
	return rep, spill, nil
}

// remoteCheck asks the server to check target, by URI or by uploading the local file (which
// the server never needs access to), handing the answer's pieces to fn.
func remoteCheck(cmd *cobra.Command, target string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags, fn func(*pb.ReportPiece) error) error {
	ctx := cmd.Context()
	opts = remote.sendCode(opts)
	c, err := dial(ctx, remote)
	if err != nil {
		return err
	}
	defer c.Close()
	var notes serverNotes
	ctx = notes.context(ctx)
	defer notes.print(cmd.ErrOrStderr())
	if isURI(target) {
		return c.CheckInPieces(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: target}}, Plan: plan, Options: opts}, fn)
	}
	f, size, err := openLocal(target)
	if err != nil {
		return err
	}
	defer f.Close()
	p := newProgress(cmd.ErrOrStderr(), size)
	defer p.done()
	return c.UploadInPieces(ctx, p.reader(f), &pb.UploadHeader{Plan: plan, Options: opts, SizeBytes: size, Name: f.Name()}, fn)
}

// serverNotes collects a check's response headers; print writes the catalog disagreements the
// server found in the job jars' analysis to stderr, as newEngine does in-process.
type serverNotes struct{ md metadata.MD }

func (n *serverNotes) context(ctx context.Context) context.Context {
	return client.WithHeader(ctx, &n.md)
}

func (n *serverNotes) print(w io.Writer) {
	for _, d := range n.md.Get(client.CatalogDisagreementHeader) {
		fmt.Fprintln(w, "preflight:", d)
	}
}

// dial connects to the server of remote mode. The verbs that send --catalog and --job-jar to the
// server (sendCode) have taken them out of remote; any left are refused.
func dial(ctx context.Context, remote remoteFlags) (*client.Client, error) {
	if len(remote.catalogs) > 0 {
		return nil, usagef("--catalog with --server applies to check and decide only")
	}
	if len(remote.jobJars) > 0 {
		return nil, usagef("--job-jar with --server applies to check and decide only")
	}
	return client.Dial(ctx, remote.server, remote.Options)
}

// sendCode returns opts (a copy when changed) asking the server to analyze the --job-jar jars and
// read the --catalog files, and takes them out of r. Local paths go as file:/// URIs: the server
// reads them itself, so they must lie inside its allowlist (a server on another machine needs
// URIs it can read, such as s3://).
func (r *remoteFlags) sendCode(opts *pb.CheckOptions) *pb.CheckOptions {
	if len(r.jobJars) == 0 && len(r.catalogs) == 0 {
		return opts
	}
	if opts == nil {
		opts = &pb.CheckOptions{}
	} else {
		opts = proto.Clone(opts).(*pb.CheckOptions)
	}
	for _, p := range r.jobJars {
		opts.JobJarUris = append(opts.JobJarUris, fileURI(p))
	}
	for _, p := range r.catalogs {
		opts.CatalogUris = append(opts.CatalogUris, fileURI(p))
	}
	r.jobJars, r.catalogs = nil, nil
	return opts
}

// fileURI is the file:/// URI of a local path (made absolute), or target itself when it is a
// URI already.
func fileURI(target string) string {
	if isURI(target) {
		return source.CanonicalFileURI(target)
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return target
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// runEmbedded opens the checkpoint and hands it to the in-process engine.
func runEmbedded[T any](cmd *cobra.Command, target string, remote remoteFlags, f func(*engine.Engine, engine.Input) (T, error)) (T, error) {
	var zero T
	eng, err := newEngine(cmd, remote.catalogs, remote.jobJars)
	if err != nil {
		return zero, err
	}
	in, closeFn, err := openInput(cmd, target)
	if err != nil {
		return zero, err
	}
	defer closeFn()
	return f(eng, in)
}

// openInput opens a checkpoint for the in-process engine, with progress on a terminal.
func openInput(cmd *cobra.Command, target string) (engine.Input, func(), error) {
	path, local := source.FilePath(target)
	if !local {
		return openRemoteInput(cmd.Context(), target)
	}
	f, size, err := openLocal(path)
	if err != nil {
		return engine.Input{}, nil, err
	}
	limitMemory(size)
	p := newProgress(cmd.ErrOrStderr(), size)
	return engine.Input{Reader: p.reader(f), Source: target, Size: size}, func() { p.done(); f.Close() }, nil
}

// openLocal opens a _metadata file or a checkpoint folder's _metadata (client.OpenMetadata) and
// words the failure for a person at a terminal.
func openLocal(target string) (*os.File, int64, error) {
	f, size, err := client.OpenMetadata(target)
	switch {
	case err == nil:
		return f, size, nil
	case errors.Is(err, fs.ErrNotExist):
		if st, serr := os.Stat(target); serr == nil && st.IsDir() {
			return nil, 0, fmt.Errorf("%w: %s is a folder without a _metadata file", errInput, target)
		}
		return nil, 0, fmt.Errorf("%w: no such file or folder: %s", errInput, target)
	}
	return nil, 0, fmt.Errorf("%w: %v", errInput, err)
}

// checkpointForms is how every verb's help names the forms of a CHECKPOINT argument.
const checkpointForms = "a _metadata file, a checkpoint folder holding one, or a URI:\n" +
	"file:///path (or Flink's file:/path), s3://, gs://, azblob:// or http(s)://"

// isURI reports whether target names a scheme (s3://, file://, Flink's file:/path) rather than a
// plain local path.
func isURI(target string) bool {
	scheme, _, ok := strings.Cut(source.CanonicalFileURI(target), "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/\\.")
}

// isLocal reports whether target is a local path or file URI rather than a remote URI.
func isLocal(target string) bool {
	_, local := source.FilePath(target)
	return local
}

// progress prints "read X of Y" on stderr while a long read runs, only when stderr is a terminal,
// so that pipelines and CI logs stay clean.
type progress struct {
	w     io.Writer
	total int64
	n     atomic.Int64
	stop  chan struct{}
	ended chan struct{}
}

func newProgress(stderr io.Writer, total int64) *progress {
	p := &progress{w: stderr, total: total}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total < 8<<20 {
		return p
	}
	p.stop, p.ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.ended)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\033[Kread %s of %s", units.Bytes(p.n.Load()), units.Bytes(p.total))
			}
		}
	}()
	return p
}

func (p *progress) reader(r io.Reader) io.Reader {
	if p.stop == nil {
		return r
	}
	return &countingReader{r: r, p: p}
}

func (p *progress) done() {
	if p.stop != nil {
		close(p.stop)
		<-p.ended
		p.stop = nil
	}
}

type countingReader struct {
	r io.Reader
	p *progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.n.Add(int64(n))
	return n, err
}

// openRemoteInput opens an object-store or http(s) checkpoint in-process. The CLI runs with the
// user's own credentials, so its allowlist is exactly the checkpoint it was asked to read.
func openRemoteInput(ctx context.Context, target string) (engine.Input, func(), error) {
	opener, err := source.New(source.Config{Allow: []string{target}, EnableHTTP: true})
	if err != nil {
		return engine.Input{}, nil, err
	}
	obj, err := opener.Open(ctx, target)
	if err != nil {
		opener.Close()
		return engine.Input{}, nil, err
	}
	return engine.Input{Reader: obj, Source: target, Size: obj.Size}, func() { obj.Close(); opener.Close() }, nil
}
