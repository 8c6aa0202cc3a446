package findings

import (
	"fmt"
	"strings"
)

// PruneCommand is the `preflight prune` command line that removes an operator's state (all of it
// when state is empty) from the checkpoint src, written to a folder beside it: complete, quoted
// for a POSIX shell, so a finding can print it to be pasted as it is.
func PruneCommand(src, operatorID, state string) string {
	dir := strings.TrimSuffix(strings.TrimSuffix(src, "_metadata"), "/")
	if dir == "" {
		dir = "savepoint" // a bare _metadata in the working folder
	}
	cmd := "preflight prune " + shellQuote(src) + " --operator " + operatorID
	if state != "" {
		cmd += " --state " + shellQuote(state)
	}
	return cmd + " --out " + shellQuote(dir+"-pruned")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-./:=@%+,", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pruneSuggestion offers `preflight prune` for orphaned state of the operator (n states: the
// first, and how to do the others). The report is the same in-process and on a server, which
// does not know where the user keeps the checkpoint, so CHECKPOINT stands for its folder.
func pruneSuggestion(operatorID string, n int, first string) string {
	s := fmt.Sprintf("Preflight removes it from a copy of the checkpoint: `%s`, with CHECKPOINT this checkpoint's folder (local)", PruneCommand("CHECKPOINT", operatorID, first))
	if n > 1 {
		s += fmt.Sprintf(", then the same with --state for each of the other %d states", n-1)
	}
	return s + "."
}
