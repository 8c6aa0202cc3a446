package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/bytesize"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/restorecode"
)

// remoteFlags select and secure the server in remote mode.
type remoteFlags struct {
	server   string
	catalogs []string // with --server: sent as CheckOptions.catalog_uris (sendCode)
	jobJars  []string // analyzed into catalog entries; with --server, sent as job_jar_uris
	client.Options
}

func (r *remoteFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.server, "server", "", "preflightd address (host:port); without it the engine runs in-process")
	f.BoolVar(&r.Insecure, "insecure", false, "connect to --server without TLS")
	f.StringVar(&r.CAFile, "ca", "", "CA certificate (PEM) to verify --server")
	f.StringVar(&r.CertFile, "cert", "", "client certificate (PEM) for mutual TLS")
	f.StringVar(&r.KeyFile, "key", "", "client key (PEM) for mutual TLS")
	f.StringVar(&r.ServerName, "server-name", "", "expected server name in its certificate")
	catalogFlag(cmd, &r.catalogs)
}

// jobJarFlag adds --job-jar to the verbs that judge a restore (check, decide).
func (r *remoteFlags) jobJarFlag(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&r.jobJars, "job-jar", nil, "job jar (or folder of classes) whose operators' restore code is analyzed, as preflight analyze does, to judge operators the catalog does not know (repeatable); with --server the server reads it, so it must lie inside the server's allowlist (a local path is sent as its file:/// URI)")
}

// catalogFlag adds user catalog files to the built-in operator catalog.
func catalogFlag(cmd *cobra.Command, paths *[]string) {
	cmd.Flags().StringArrayVar(paths, "catalog", nil, "extra operator catalog file (JSON, same shape as the built-in one, e.g. from preflight analyze --catalog-out; repeatable); with --server the server reads it from its allowlist, as --job-jar")
}

// newEngine returns the in-process engine with the user's catalog files, if any, and the
// entries the analysis of the job jars gives (which take precedence over hand-written ones).
func newEngine(cmd *cobra.Command, catalogs, jobJars []string) (*engine.Engine, error) {
	if len(catalogs) == 0 && len(jobJars) == 0 {
		return engine.New(), nil
	}
	cat, err := findings.LoadCatalog(catalogs...)
	if err != nil {
		return nil, usageError{err}
	}
	if len(jobJars) > 0 {
		rep, err := analyzeJars(cmd.Context(), jobJars)
		if err != nil {
			return nil, err
		}
		analyzed := rep.Catalog()
		for _, d := range restorecode.Disagreements(cat, analyzed) {
			fmt.Fprintln(cmd.ErrOrStderr(), "preflight:", d)
		}
		b, err := json.Marshal(analyzed)
		if err != nil {
			return nil, err
		}
		if err := cat.MergeJSON(b, "--job-jar analysis"); err != nil {
			return nil, err
		}
	}
	return engine.NewWithCatalog(cat), nil
}

func outputFlag(cmd *cobra.Command, out *string) {
	cmd.Flags().StringVarP(out, "output", "o", "text", "output format: text, json or markdown")
}

func parseOutput(s string) (report.Format, error) {
	f, err := report.ParseFormat(s)
	if err != nil {
		return "", usageError{err}
	}
	return f, nil
}

// sizeFlag registers a byte-size flag (10485760, 10MiB, 10mb, 20kb: binary multiples, as Flink's
// MemorySize) whose help shows its default as a size.
func sizeFlag(fl *pflag.FlagSet, p *int64, name string, def int64, usage string) {
	*p = def
	fl.Var(bytesize.Value{P: p}, name, usage)
}

// parseKeyInt reads KEY=N at full width (int64): callers check N's bounds before narrowing it.
func parseKeyInt(flag, s string) (string, int64, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", 0, usagef("--%s %q: want KEY=N", flag, s)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return "", 0, usagef("--%s %q: %s is far outside 1..%d", flag, s, strings.TrimSpace(v), engine.MaxParallelismBound)
	case err != nil:
		return "", 0, usagef("--%s %q: %q is not a whole number", flag, s, v)
	}
	return k, n, nil
}
