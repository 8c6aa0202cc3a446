package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
			runExample(t, line, args)
			ran++
		}
		if ran == 0 {
			t.Errorf("%s: no --help example runs on the repository's files", verb.Name())
		}
	}
}

// runExample runs an example's arguments, its outputs (--out, --catalog-out) moved into a scratch
// folder rather than the repository: it must end with an answer (exit 0, 1 or 4), never a usage
// or internal error.
func runExample(t *testing.T, line string, args []string) {
	t.Helper()
	for i, a := range args {
		if i > 0 && (args[i-1] == "--out" || args[i-1] == "--catalog-out") {
			args[i] = filepath.Join(t.TempDir(), filepath.Base(a))
		}
	}
	if got, _, stderr := runCLI(t, args...); got != exitAllow && got != exitDeny && got != exitAdjust {
		t.Errorf("%s: exit %d: %s", line, got, stderr)
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

// TestReadmeExamplesRun runs, from the repository root, every `preflight` command of the
// README's shell blocks that uses only the repository's files, as printed (variables set earlier
// in the block expanded, continuation lines joined, output folders moved to a scratch folder, a
// daemon on loopback started here):
// each must end with an answer, never a usage or internal error. Synopsis lines (placeholders
// in capitals, [optional] parts) and commands naming clusters, buckets or servers are skipped.
func TestReadmeExamplesRun(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ran, server := 0, ""
	for _, cmd := range readmeCommands(string(readme)) {
		words := shellWords(cmd)
		args := words[1:]
		for i, a := range args { // a daemon on loopback: a real one, started here
			if i > 0 && args[i-1] == "--server" && strings.HasPrefix(a, "127.0.0.1:") {
				if server == "" {
					server = startServer(t)
				}
				args[i] = server
			}
		}
		local := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == server || a == "--server" })
		if missing := missingPath(local); missing != "" {
			t.Logf("not run here (%s is not in the repository): %s", missing, cmd)
			continue
		}
		t.Logf("running: %s", cmd)
		runExample(t, cmd, args)
		ran++
	}
	if ran < 5 {
		t.Errorf("only %d README commands ran on the repository's files", ran)
	}
}

var (
	placeholder = regexp.MustCompile(`(^|[\s=/(])[A-Z][A-Z_-]{1,}[A-Z](\b|$)`)
	shellVar    = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$`)
)

// readmeCommands returns the runnable `preflight` command lines of the README's ```sh blocks.
func readmeCommands(readme string) []string {
	var out []string
	inBlock, vars := false, map[string]string{}
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock, vars = line == "```sh" || line == "```bash" || line == "```console", map[string]string{}
			continue
		case !inBlock:
			continue
		}
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		line = strings.TrimPrefix(line, "$ ")
		if rest, ok := strings.CutPrefix(line, "go run ./client/preflight "); ok {
			line = "preflight " + rest
		}
		if m := shellVar.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
			continue
		}
		line, _, _ = strings.Cut(line, " #")
		line, _, _ = strings.Cut(line, "|")
		line = strings.TrimSpace(os.Expand(line, func(k string) string { return vars[k] }))
		if !strings.HasPrefix(line, "preflight ") || strings.ContainsAny(line, "[]<>") || strings.Contains(line, "...") ||
			placeholder.MatchString(line) {
			continue
		}
		out = append(out, line)
	}
	return out
}
