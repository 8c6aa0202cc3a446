package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/classpath"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// classpathFlags are the flags of `preflight classpath`.
type classpathFlags struct {
	jobJar, lib, plugins, conf, home string
	flinkVersion                     string
	javaVersion                      int
	failOn, output                   string
	remote                           remoteFlags
}

func newClasspathCommand(code *int) *cobra.Command {
	var f classpathFlags
	cmd := &cobra.Command{
		Use:   "classpath --job-jar JOB.jar --flink-lib DIR",
		Short: "Check a job jar against a Flink cluster's class path before the (re)start",
		Long: `classpath indexes the job jar and the cluster's lib/ (and plugins/) without extracting them, applies
Flink's classloading rules of the cluster's version and configuration (classloader.resolve-order,
parent-first patterns, plugin class loaders), and reports what would break when the job starts:
classes loaded twice across class loaders (LinkageError, ClassCastException), Flink modules and
plugins bundled in the job jar, Scala binary and Java class file version mismatches.`,
		Example: `  preflight classpath --job-jar target/orders-job-1.0.jar --flink-home /opt/flink --java-version 11
  preflight classpath --job-jar job.jar --flink-lib /opt/flink/lib --plugins /opt/flink/plugins --flink-conf /opt/flink/conf/flink-conf.yaml -o markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := parseOutput(f.output)
			if err != nil {
				return err
			}
			fail, err := findings.ParseSeverity(f.failOn)
			if err != nil || fail == findings.SeverityUnspecified {
				return usagef("--fail-on %q: want info, warning or error", f.failOn)
			}
			if len(f.remote.catalogs) > 0 {
				return usagef("--catalog describes checkpoint operators; it does not apply to classpath")
			}
			if f.jobJar == "" {
				return usagef("--job-jar is required")
			}
			if f.lib == "" && f.home == "" {
				return usagef("name the cluster's class path with --flink-lib DIR or --flink-home DIR")
			}
			if f.javaVersion < 0 {
				return usagef("--java-version %d: want a Java release such as 8, 11, 17 or 21", f.javaVersion)
			}
			var rep *pb.ClasspathReport
			if f.remote.server == "" {
				rep, err = classpath.Check(cmd.Context(), classpath.Input{
					JobJar: f.jobJar, Lib: f.lib, Plugins: f.plugins, ConfFile: f.conf, FlinkHome: f.home,
					FlinkVersion: f.flinkVersion, JavaVersion: f.javaVersion, FailLevel: fail,
				})
				var ie *classpath.InputError
				if errors.As(err, &ie) {
					err = fmt.Errorf("%w: %v", errInput, err)
				}
			} else {
				rep, err = f.remoteCheck(cmd, pb.Severity(fail))
			}
			if err != nil {
				return err
			}
			if err := report.WriteClasspath(cmd.OutOrStdout(), format, rep); err != nil {
				return err
			}
			*code = verdictExitCode(rep.GetVerdict())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.jobJar, "job-jar", "", "the job (uber) jar")
	fl.StringVar(&f.lib, "flink-lib", "", "the cluster's lib/ folder (the parent class path of user code)")
	fl.StringVar(&f.plugins, "plugins", "", "the cluster's plugins/ folder")
	fl.StringVar(&f.conf, "flink-conf", "", "the cluster's flink-conf.yaml (before 1.19) or config.yaml (1.19+)")
	fl.StringVar(&f.home, "flink-home", "", "a Flink installation (e.g. /opt/flink in the image): lib/, plugins/ and conf/ under it")
	fl.StringVar(&f.flinkVersion, "flink-version", "", "Flink version of the cluster, e.g. 1.9.1 (default: from lib/'s flink-dist jar name)")
	fl.IntVar(&f.javaVersion, "java-version", 0, "Java release of the cluster's JVM, e.g. 11 (0: no class file version check)")
	fl.StringVar(&f.failOn, "fail-on", "error", "lowest severity that fails the check: info, warning or error")
	outputFlag(cmd, &f.output)
	f.remote.register(cmd)
	return cmd
}

// remoteCheck sends the paths as URIs: the server reads them inside its allowlist, so they must
// name files on the server's side (shared volume or the same machine).
func (f *classpathFlags) remoteCheck(cmd *cobra.Command, fail pb.Severity) (*pb.ClasspathReport, error) {
	c, err := dial(cmd.Context(), f.remote)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	abs := func(p string) string {
		if p == "" || isURI(p) {
			return p
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	return c.Classpath(cmd.Context(), &pb.ClasspathCheckRequest{
		JobJarUri: abs(f.jobJar), FlinkLibUri: abs(f.lib), PluginsUri: abs(f.plugins), FlinkConfUri: abs(f.conf),
		FlinkHomeUri: abs(f.home), FlinkVersion: strings.TrimSpace(f.flinkVersion), JavaVersion: int32(f.javaVersion), FailLevel: fail,
	})
}
