package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/bytesize"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
)

// remoteFlags select and secure the server in remote mode.
type remoteFlags struct {
	server   string
	catalogs []string // in-process only: the server has its own catalog
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

// catalogFlag adds user catalog files to the built-in operator catalog.
func catalogFlag(cmd *cobra.Command, paths *[]string) {
	cmd.Flags().StringArrayVar(paths, "catalog", nil, "extra operator catalog file (JSON, same shape as the built-in one; repeatable)")
}

// newEngine returns the in-process engine with the user's catalog files, if any.
func newEngine(catalogs []string) (*engine.Engine, error) {
	if len(catalogs) == 0 {
		return engine.New(), nil
	}
	cat, err := findings.LoadCatalog(catalogs...)
	if err != nil {
		return nil, usageError{err}
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
