package classpath

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is what the classpath check reads from a Flink configuration file.
type Config struct {
	File          string
	ResolveOrder  string   // "" = not set
	ParentFirst   []string // classloader.parent-first-patterns.default; nil = not set
	Additional    []string
	PluginDefault []string
	PluginAdd     []string
	keys          map[string]string
}

// Get returns a raw value by flat key.
func (c *Config) Get(key string) (string, bool) {
	v, ok := c.keys[key]
	return v, ok
}

// ReadConfig reads flink-conf.yaml (Flink before 1.19: flat "key: value" lines, which Flink
// parses line by line, not as YAML) or config.yaml (1.19+: standard YAML, nested keys allowed,
// lists as YAML sequences). The file name decides, as in GlobalConfiguration.
func ReadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(path, b)
}

// parseConfig parses the bytes of a configuration file named path.
func parseConfig(path string, b []byte) (*Config, error) {
	c := &Config{File: path, keys: map[string]string{}}
	if filepath.Base(path) == "config.yaml" {
		var root any
		if err := yaml.Unmarshal(b, &root); err != nil {
			return nil, fmt.Errorf("%s: not valid YAML (config.yaml is standard YAML since Flink 1.19): %w", path, err)
		}
		if root != nil {
			m, ok := root.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: the top level is not a mapping", path)
			}
			flatten("", m, c.keys)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				continue // Flink logs and skips such lines too
			}
			c.keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if v, ok := c.keys["classloader.resolve-order"]; ok {
		c.ResolveOrder = strings.ToLower(strings.Trim(v, `"'`))
		if c.ResolveOrder != "child-first" && c.ResolveOrder != "parent-first" {
			return nil, fmt.Errorf("%s: classloader.resolve-order %q: Flink accepts child-first or parent-first", path, v)
		}
	}
	if v, ok := c.keys["classloader.parent-first-patterns.default"]; ok {
		c.ParentFirst = splitPatterns(v)
	} else if v, ok := c.keys["classloader.parent-first-patterns"]; ok { // deprecated key
		c.ParentFirst = splitPatterns(v)
	}
	c.Additional = splitPatterns(c.keys["classloader.parent-first-patterns.additional"])
	if v, ok := c.keys["plugin.classloader.parent-first-patterns.default"]; ok {
		c.PluginDefault = splitPatterns(v)
	}
	c.PluginAdd = splitPatterns(c.keys["plugin.classloader.parent-first-patterns.additional"])
	return c, nil
}

// flatten turns nested YAML mappings into Flink's dotted keys; lists become ";"-joined strings
// (Flink's list syntax in the legacy format).
func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch x := v.(type) {
		case map[string]any:
			flatten(key, x, out)
		case []any:
			parts := make([]string, 0, len(x))
			for _, e := range x {
				parts = append(parts, fmt.Sprint(e))
			}
			out[key] = strings.Join(parts, ";")
		case nil:
			out[key] = ""
		default:
			out[key] = fmt.Sprint(x)
		}
	}
}

// splitPatterns splits Flink's list syntax: "a;b;c" (legacy and string form), also "[a, b]".
func splitPatterns(v string) []string {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), `"'`))
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var out []string
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		if p = strings.TrimSpace(strings.Trim(strings.TrimSpace(p), `"'`)); p != "" {
			out = append(out, p)
		}
	}
	return out
}
