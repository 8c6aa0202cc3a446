// Package flagconfig lets every flag of a flag.FlagSet also come from an environment variable and
// from a configuration file, without declaring anything per flag: it walks the flag set. The
// precedence is flag > environment > file > default.
//
// The variable of flag "max-upload-bytes" with prefix "PREFLIGHT" is PREFLIGHT_MAX_UPLOAD_BYTES.
// A repeatable flag (one whose Value implements Repeatable) takes several values from one variable,
// separated by white space.
//
// The file is a flat YAML subset a person writes by hand, one flag per key, the flag's own syntax
// for values (sizes as 512MiB, durations as 30s), and a list for repeatable flags:
//
//	# preflightd.yaml
//	grpc-addr: 0.0.0.0:8443
//	max-upload-bytes: 512MiB
//	request-timeout: 2m
//	allow:
//	  - s3://flink-state/savepoints/?region=eu-west-1
//	  - /data/checkpoints
package flagconfig

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Repeatable marks a flag.Value that accumulates one value per Set call (e.g. --allow).
type Repeatable interface {
	flag.Value
	Repeatable()
}

// EnvName is the environment variable of a flag.
func EnvName(prefix, flagName string) string {
	return prefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flagName))
}

// Parse parses args into fs, then fills every flag not given on the command line from the
// environment (lookupEnv, usually os.LookupEnv) and then from the file named by the flag
// configFlag (which may itself come from the environment). It returns the file read, if any.
func Parse(fs *flag.FlagSet, args []string, prefix, configFlag string, lookupEnv func(string) (string, bool)) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envErr != nil {
			return
		}
		v, ok := lookupEnv(EnvName(prefix, f.Name))
		if !ok {
			return
		}
		vals := []string{v}
		if _, rep := f.Value.(Repeatable); rep {
			vals = strings.Fields(v)
		}
		for _, x := range vals {
			if err := fs.Set(f.Name, x); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", EnvName(prefix, f.Name), v, err)
				return
			}
		}
		set[f.Name] = true
	})
	if envErr != nil {
		return "", envErr
	}

	cf := fs.Lookup(configFlag)
	if cf == nil || cf.Value.String() == "" {
		return "", nil
	}
	path := cf.Value.String()
	entries, err := readFile(path)
	if err != nil {
		return path, err
	}
	for _, e := range entries {
		f := fs.Lookup(e.key)
		if f == nil || e.key == configFlag {
			return path, fmt.Errorf("%s:%d: unknown setting %q (settings are the flag names, e.g. max-upload-bytes)", path, e.line, e.key)
		}
		if set[e.key] {
			continue // the command line or the environment said otherwise
		}
		if _, rep := f.Value.(Repeatable); !rep && len(e.values) != 1 {
			return path, fmt.Errorf("%s:%d: %s takes one value, not a list", path, e.line, e.key)
		}
		for _, v := range e.values {
			if err := fs.Set(e.key, v); err != nil {
				return path, fmt.Errorf("%s:%d: %s: %v", path, e.line, e.key, err)
			}
		}
	}
	return path, nil
}

type entry struct {
	key    string
	values []string
	line   int
}

// readFile reads the flat YAML subset: "key: value", "key:" followed by "- item" lines, "#"
// comments, values optionally in single or double quotes.
func readFile(path string) ([]entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	var out []entry
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(stripComment(sc.Text()), " \t\r")
		trimmed := strings.TrimSpace(line)
		indented := trimmed != line
		if trimmed == "" {
			continue
		}
		if item, ok := strings.CutPrefix(trimmed, "- "); ok || trimmed == "-" {
			if len(out) == 0 || !indented {
				return nil, fmt.Errorf("%s:%d: a list item must be indented under a key", path, n)
			}
			out[len(out)-1].values = append(out[len(out)-1].values, unquote(strings.TrimSpace(item)))
			continue
		}
		if indented {
			return nil, fmt.Errorf("%s:%d: unexpected indentation (the file is flat: one key per line)", path, n)
		}
		k, v, ok := strings.Cut(trimmed, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: want \"key: value\", got %q", path, n, trimmed)
		}
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s is already set on line %d", path, n, k, prev)
		}
		seen[k] = n
		e := entry{key: k, line: n}
		if v = strings.TrimSpace(v); v != "" {
			e.values = []string{unquote(v)}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range out {
		if len(e.values) == 0 {
			return nil, fmt.Errorf("%s:%d: %s has no value", path, e.line, e.key)
		}
	}
	return out, nil
}

// stripComment drops a "#" comment that starts a line or follows white space (a "#" inside a
// URI fragment or a quoted value stays).
func stripComment(s string) string {
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '"' || c == '\'':
			inQuote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}
