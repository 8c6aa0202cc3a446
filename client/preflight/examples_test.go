package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpExamplesRun runs, from the repository root, every `--help` example whose files are in
// the repository (testdata, the repository's own jar) as printed, up to a pipe or &&: each must
// end with an answer (exit 0, 1 or 4), never a usage or internal error. Examples that name
// clusters, buckets, servers or paths of a user's machine are listed and skipped (no test
// contacts anything but loopback); every verb but
// classpath (which needs a Flink distribution) must have at least one example that runs.
func TestHelpExamplesRun(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	code := 0
	verbs := []*cobra.Command{newCheckCommand(&code), newInspectCommand(), newDecideCommand(&code), newPruneCommand(),
		newDiffCommand(&code), newTrendCommand(&code), newRulesCommand(), newAnalyzeCommand()}
	for _, verb := range verbs {
		ran := 0
		for _, line := range strings.Split(verb.Example, "\n") {
			line, _, _ = strings.Cut(strings.TrimSpace(line), "|")
			line, _, _ = strings.Cut(line, "&&")
			words := shellWords(strings.TrimSpace(line))
			if len(words) < 2 || words[0] != "preflight" {
				continue
			}
			args := words[1:]
			if missing := missingPath(args); missing != "" {
				t.Logf("%s: not run here (%s is not in the repository): %s", verb.Name(), missing, line)
				continue
			}
			for i, a := range args { // write outputs into a scratch folder, not the repository
				if i > 0 && (args[i-1] == "--out" || args[i-1] == "--catalog-out") {
					args[i] = filepath.Join(t.TempDir(), filepath.Base(a))
				}
			}
			got, _, stderr := runCLI(t, args...)
			if got != exitAllow && got != exitDeny && got != exitAdjust {
				t.Errorf("%s: exit %d: %s", line, got, stderr)
			}
			ran++
		}
		if ran == 0 {
			t.Errorf("%s: no --help example runs on the repository's files", verb.Name())
		}
	}
}

// missingPath returns the first argument that is a URI or names a file or folder (it has a
// slash, a jar's extension or a checkpoint folder's name) that does not exist, or "".
func missingPath(args []string) string {
	for i, a := range args {
		if strings.Contains(a, "://") || i > 0 && (args[i-1] == "--server" || args[i-1] == "--flink-rest") {
			return a // a cluster, bucket or server: never contacted from a test
		}
		if strings.HasPrefix(a, "-") || i > 0 && (args[i-1] == "--out" || args[i-1] == "--catalog-out") {
			continue
		}
		if strings.Contains(a, "/") || filepath.Ext(a) == ".jar" || strings.HasPrefix(a, "chk-") || strings.HasPrefix(a, "savepoint-") {
			if _, err := os.Stat(a); err != nil {
				return a
			}
		}
	}
	return ""
}
