package main

import (
	"fmt"

	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// checkFlags are the flags of `preflight check`.
type checkFlags struct {
	parallelism     int
	set             []string
	maxParallelism  []string
	chains          []string
	inMappers       []string
	outMappers      []string
	newJobOperators []string
	allowNonRestore bool
	flinkVersion    string
	connectors      []string
	frameSize       int64
	inlineThreshold int64
	jmMemory        int64
	restoreMode     string
	txnTimeout      time.Duration
	snapshotTime    string
	failOn          string
	output          string
	subtasks        bool
	full            bool
	remote          remoteFlags
	job             jobFlags
	verify          verifyFlags
}

func newCheckCommand(code *int) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [CHECKPOINT]",
		Short: "Check a restore plan against a checkpoint or savepoint",
		Long: `check simulates restoring CHECKPOINT at the planned parallelism and reports the verdict, the
findings with their fixes, and the nearest safe parallelism of every vertex that would fail.

CHECKPOINT is ` + checkpointForms + `.

KEY in --set, --max-parallelism and --chain is a JobVertexID or OperatorID in hex (as Flink prints
it, or its first 8 or more digits, as the reports print it), an operator uid, or (format version
5+) an operator name.

With --flink-rest URL --job JOBID, the running job is read from Flink's REST API: its vertices and
their chains (so --set VERTEX_ID=P reaches every operator chained into the vertex) and, when no
CHECKPOINT is given, its newest restorable checkpoint or savepoint, which is named on stderr. With
--latest, CHECKPOINT is a job's checkpoint folder and its newest complete chk-N or savepoint is read.`,
		Example: `  preflight check testdata/compact-sink/_metadata --set compact-operator=8
  preflight check s3://bucket/savepoints/savepoint-1a2b3c --parallelism 12 --flink-version 1.19.1 -o json
  preflight check ./chk-42 --server preflight.internal:8443 --ca ca.pem --fail-on warning
  preflight check --flink-rest http://jobmanager:8081 --job 4a7f0c1e9b2d3a5c6e8f0a1b2c3d4e5f --set 0d9ffb4f280d028d86dadba01ac205d7=8
  preflight check s3://bucket/checkpoints/4a7f0c1e9b2d3a5c6e8f0a1b2c3d4e5f --latest -p 8
  preflight check s3://bucket/savepoints/savepoint-1a2b3c --verify-files`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.job.validate(args); err != nil {
				return err
			}
			plan, opts, format, err := f.parse()
			if err != nil {
				return err
			}
			// JSON carries the per-subtask detail (the API's OperatorAssignment.subtasks) only
			// when asked, as the API does. Text always shows the per-subtask chart, and only the
			// chart's rows are computed: in-process (engine.SubtasksForChart) or by a server asked
			// for them (chart_subtasks, askChartRows).
			opts.IncludeSubtasks = f.subtasks
			if serverVerifies(f.remote, args) {
				f.verify.options(opts)
			}
			rep, table, spill, err := f.checkReport(cmd, args, plan, opts, format)
			if err != nil {
				return err
			}
			if spill != nil {
				defer spill.Close()
			}
			if !serverVerifies(f.remote, args) {
				f.verify.apply(cmd.Context(), verifyTarget(rep, args), rep, opts)
			}
			lim := report.DefaultLimits
			if f.full {
				lim = report.NoLimits
			}
			switch {
			case spill != nil:
				err = report.WriteJSONSpilled(cmd.OutOrStdout(), rep, spill)
			case table != nil && table.Len() > 0 && format == report.Markdown:
				err = report.WriteMarkdownTable(cmd.OutOrStdout(), rep, table, lim)
			case table != nil && table.Len() > 0:
				err = report.WriteTextLimited(cmd.OutOrStdout(), rep, table, lim)
			default:
				err = report.WriteCheckLimited(cmd.OutOrStdout(), format, rep, lim)
			}
			if err != nil {
				return err
			}
			*code = verdictExitCode(rep.GetVerdict())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.parallelism, "parallelism", "p", 0, "parallelism of every vertex not named by --set (0 keeps each operator's stored parallelism)")
	fl.StringArrayVar(&f.set, "set", nil, "per-vertex parallelism KEY=P (repeatable)")
	fl.StringArrayVar(&f.maxParallelism, "max-parallelism", nil, "the new job's configured max parallelism KEY=N (repeatable); unset vertices derive theirs")
	fl.StringArrayVar(&f.chains, "chain", nil, "operators chained into one vertex: HEAD=OP,OP,... (repeatable)")
	fl.StringArrayVar(&f.inMappers, "input-channel-mapper", nil, "subtask mapper of a vertex's input edge for unaligned-checkpoint channel state: KEY=first|full|range|round-robin|arbitrary|unsupported (repeatable)")
	fl.StringArrayVar(&f.outMappers, "output-channel-mapper", nil, "subtask mapper of a vertex's output edge (its downstream input's mapper): KEY=MAPPER (repeatable)")
	fl.StringSliceVar(&f.newJobOperators, "new-job-operators", nil, "IDs or uids of all operators of the new job (enables missing-operator checks)")
	fl.BoolVar(&f.allowNonRestore, "allow-non-restored-state", false, "the restore uses --allowNonRestoredState")
	fl.StringVar(&f.flinkVersion, "flink-version", "", "Flink version of the restoring cluster, e.g. 1.19.1 (unknown: version-dependent bugs are assumed to apply)")
	fl.StringVar(&f.failOn, "fail-on", "error", "lowest severity that fails the check: info, warning or error")
	fl.BoolVar(&f.subtasks, "subtasks", false, "include per-subtask detail in -o json (operators[].subtasks, the API's include_subtasks)")
	fl.BoolVar(&f.full, "full", false, fmt.Sprintf("text and Markdown show every finding and operator (default: the first %d findings, most severe first, and %d operators, counting the rest)",
		report.DefaultLimits.Findings, report.DefaultLimits.Operators))
	f.registerShared(cmd, false)
	return cmd
}

// checkReport runs the check the flags ask for (format being the report's) and returns its
// report, with the operators table (text and Markdown) or the spill (JSON) to write it from.
func (f *checkFlags) checkReport(cmd *cobra.Command, args []string, plan *pb.RescalePlan, opts *pb.CheckOptions, format report.Format) (
	rep *pb.RescaleReport, table *report.OperatorTable, spill *report.OperatorSpill, err error) {
	// JSON is written from the operators spilled as they are checked in-process, or as
	// the pieces of every subtask's rows arrive from a server, not from a joined report.
	spillJSON := format == report.JSON && (f.remote.server == "" || f.subtasks)
	discovered := f.job.restURL != "" || f.job.latest
	var target string
	var choice *pb.CheckpointChoice
	if len(args) > 0 {
		target = args[0]
	}
	if f.job.latest && f.job.restURL == "" && (f.remote.server == "" || !isURI(target)) {
		// The newest snapshot of a folder found here (in-process, or a local folder
		// uploaded to a server) is checked as a file is.
		if choice, err = chooseLatest(cmd, target); err != nil {
			return nil, nil, nil, err
		}
		target, discovered = choice.GetUri(), false
	}
	switch {
	case discovered:
		rep, spill, err = discoveredReport(cmd, args, plan, opts, f.remote, &f.job, format == report.Text, spillJSON)
	case spillJSON && f.remote.server != "":
		rep, spill, err = spilledReport(cmd, target, plan, opts, f.remote)
	case spillJSON:
		rep, spill, err = spilledEmbeddedReport(cmd, target, plan, opts, f.remote)
	default:
		if format == report.Text || format == report.Markdown {
			table = &report.OperatorTable{Keep: report.DefaultLimits.Operators}
			if f.full {
				table.Keep = 0
			}
		}
		rep, err = checkpointReport(cmd, target, plan, opts, f.remote, format == report.Text, table)
	}
	if err == nil && choice != nil {
		rep.CheckpointChoice = choice
	}
	return rep, table, spill, err
}

// parse turns the flags into the API's plan and options and the output format (check and decide).
func (f *checkFlags) parse() (*pb.RescalePlan, *pb.CheckOptions, report.Format, error) {
	plan, opts, err := f.plan()
	if err != nil {
		return nil, nil, "", err
	}
	format, err := parseOutput(f.output)
	return plan, opts, format, err
}

// plan turns the flags into the API's plan and options.
func (f *checkFlags) plan() (*pb.RescalePlan, *pb.CheckOptions, error) {
	// Every count is checked at full width before it is narrowed to the API's int32, so that
	// 4294967299 is refused instead of wrapping to 3.
	if err := engine.ValidateParallelism("parallelism", "", int64(f.parallelism), true); err != nil {
		return nil, nil, usagef("--parallelism %d: %s", f.parallelism, planErrorMsg(err))
	}
	plan := &pb.RescalePlan{DefaultParallelism: int32(f.parallelism), NewJobOperators: f.newJobOperators}
	var err error
	if plan.InputChannelMappers, err = channelMappers("input-channel-mapper", f.inMappers); err != nil {
		return nil, nil, err
	}
	if plan.OutputChannelMappers, err = channelMappers("output-channel-mapper", f.outMappers); err != nil {
		return nil, nil, err
	}
	for _, s := range f.set {
		k, n, err := parseKeyInt("set", s)
		if err != nil {
			return nil, nil, err
		}
		if err := engine.ValidateParallelism("parallelism", k, n, false); err != nil {
			return nil, nil, usagef("--set %q: %s", s, planErrorMsg(err))
		}
		if plan.VertexParallelism == nil {
			plan.VertexParallelism = map[string]int32{}
		}
		plan.VertexParallelism[k] = int32(n)
	}
	for _, s := range f.maxParallelism {
		k, n, err := parseKeyInt("max-parallelism", s)
		if err != nil {
			return nil, nil, err
		}
		if err := engine.ValidateMaxParallelism("max_parallelism", k, n); err != nil {
			return nil, nil, usagef("--max-parallelism %q: %s", s, planErrorMsg(err))
		}
		if plan.MaxParallelism == nil {
			plan.MaxParallelism = map[string]*pb.MaxParallelism{}
		}
		plan.MaxParallelism[k] = &pb.MaxParallelism{Value: int32(n), Configured: true}
	}
	for _, s := range f.chains {
		head, ops, ok := strings.Cut(s, "=")
		if !ok || head == "" || ops == "" {
			return nil, nil, usagef("--chain %q: want HEAD=OP,OP,...", s)
		}
		members := []string{head}
		for _, op := range strings.Split(ops, ",") {
			if op = strings.TrimSpace(op); op != "" && op != head {
				members = append(members, op)
			}
		}
		plan.Vertices = append(plan.Vertices, &pb.Vertex{Id: head, Operators: members})
	}
	opts := &pb.CheckOptions{FlinkVersion: f.flinkVersion, AllowNonRestoredState: f.allowNonRestore,
		RpcFrameSizeBytes: f.frameSize, InlineStateThresholdBytes: f.inlineThreshold, JobmanagerMemoryBytes: f.jmMemory,
		RestoreMode: f.restoreMode, KafkaTransactionTimeoutMs: f.txnTimeout.Milliseconds(), SnapshotTime: f.snapshotTime}
	if f.restoreMode != "" && engine.RestoreMode(f.restoreMode) == "" {
		return nil, nil, usagef("--restore-mode %q: want claim, no-claim or legacy", f.restoreMode)
	}
	if f.txnTimeout < 0 {
		return nil, nil, usagef("--kafka-transaction-timeout %s: cannot be negative", f.txnTimeout)
	}
	if f.snapshotTime != "" {
		if _, err := time.Parse(time.RFC3339, f.snapshotTime); err != nil {
			return nil, nil, usagef("--snapshot-time %q: want an RFC 3339 time, e.g. 2026-12-05T06:00:00Z", f.snapshotTime)
		}
	}
	for _, c := range f.connectors {
		name, version, err := findings.ParseConnectorVersion(c)
		if err != nil {
			return nil, nil, usagef("--connector-version: %v", err)
		}
		if opts.ConnectorVersions == nil {
			opts.ConnectorVersions = map[string]string{}
		}
		opts.ConnectorVersions[name] = version
	}
	switch strings.ToLower(f.failOn) {
	case "info":
		opts.FailLevel = pb.Severity_SEVERITY_INFO
	case "warning", "warn":
		opts.FailLevel = pb.Severity_SEVERITY_WARNING
	case "error":
		opts.FailLevel = pb.Severity_SEVERITY_ERROR
	default:
		return nil, nil, usagef("--fail-on %q: want info, warning or error", f.failOn)
	}
	// The engine's own validation (the server runs the same): a malformed --flink-version fails
	// here instead of turning the version-dependent rules off.
	if err := engine.ValidateRequest(plan, opts); err != nil {
		var oe *engine.OptionsError
		if errors.As(err, &oe) && oe.Field == "flink_version" {
			return nil, nil, usagef("--flink-version: %s", oe.Msg)
		}
		return nil, nil, usageError{err}
	}
	return plan, opts, nil
}

// planErrorMsg is the reason of a *engine.PlanError (without its field, which the flag names).
func planErrorMsg(err error) string {
	var pe *engine.PlanError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

// registerShared registers the flags check and decide share: the cluster's connector versions
// and sizes, how the job is restored (the restore mode, the Kafka transaction timeout and when
// the snapshot was taken), the output format, the server or in-process engine with the job jar,
// the job, and the state-file verification (on by default where verifyFiles).
func (f *checkFlags) registerShared(cmd *cobra.Command, verifyFiles bool) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.connectors, "connector-version", nil, "version of a connector the job runs, NAME=VERSION, e.g. iceberg=1.4.3, flink-connector-kafka=3.2.0 (repeatable; unknown: version-dependent labels are assumed to apply)")
	sizeFlag(fl, &f.frameSize, "frame-size", 10<<20, "RPC frame size of the cluster (pekko.framesize)")
	sizeFlag(fl, &f.inlineThreshold, "inline-threshold", 20<<10, "execution.checkpointing.data-inline-threshold of the cluster")
	sizeFlag(fl, &f.jmMemory, "jm-memory", 0, "JobManager heap available for the restore (0: unknown)")
	fl.StringVar(&f.restoreMode, "restore-mode", "", "how the job is restored: claim, no-claim or legacy (Flink's -claimMode; unset: Flink's default no-claim is assumed)")
	fl.DurationVar(&f.txnTimeout, "kafka-transaction-timeout", 0, "transaction.timeout.ms of the job's Kafka producers, e.g. 15m (0: the connector's default, 1h)")
	fl.StringVar(&f.snapshotTime, "snapshot-time", "", "when the checkpoint was taken, RFC 3339, e.g. 2026-12-05T06:00:00Z (for rules that depend on its age)")
	outputFlag(cmd, &f.output)
	f.remote.register(cmd)
	f.remote.jobJarFlag(cmd)
	f.job.register(cmd)
	f.verify.register(cmd, verifyFiles)
}

// channelMappers reads KEY=MAPPER flags: the mapper by its Flink name (round-robin or
// ROUND_ROBIN, ...).
func channelMappers(flag string, vals []string) (map[string]pb.SubtaskMapper, error) {
	var out map[string]pb.SubtaskMapper
	for _, s := range vals {
		k, v, ok := strings.Cut(s, "=")
		name := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), "-", "_"))
		m, known := pb.SubtaskMapper_value["SUBTASK_MAPPER_"+name]
		if !ok || strings.TrimSpace(k) == "" || !known || m == 0 {
			return nil, usagef("--%s %q: want KEY=MAPPER, MAPPER one of first, full, range, round-robin, arbitrary, unsupported", flag, s)
		}
		if out == nil {
			out = map[string]pb.SubtaskMapper{}
		}
		out[strings.TrimSpace(k)] = pb.SubtaskMapper(m)
	}
	return out, nil
}
