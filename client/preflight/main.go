// Command preflight answers, before a Flink job is restarted at a new parallelism, whether the
// restore from a checkpoint or savepoint will work and what it will cost. Without --server it runs
// the engine in-process; with --server it asks a preflightd server and gets the same answer.
//
// Exit codes: 0 the restore is allowed (warnings below the fail level included), 1 findings at or
// above the fail level (DENY), 2 usage or input error (bad flags, unreadable or malformed
// checkpoint), 3 internal or remote error (server unreachable, RPC failure). `preflight decide`
// exits 0 APPROVE, 1 VETO, 4 ADJUST (2 and 3 as above).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
