// Package buildinfo tells which build of Flink Preflight is running: the module version, the VCS
// revision and the Go version, read from the binary's embedded build information. Release builds
// may override the version and revision with the linker:
//
//	go build -ldflags "-X github.com/flinkpreflight/preflight/internal/buildinfo.version=v1.0.0 \
//	  -X github.com/flinkpreflight/preflight/internal/buildinfo.revision=$(git rev-parse HEAD)"
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time with -X; empty means "read it from the build information".
var (
	version  string
	revision string
)

// Info describes one build.
type Info struct {
	// Version is the module version ("v1.2.3", a pseudo-version, or "(devel)" for a plain
	// `go build` in a work tree without a tag).
	Version string
	// Revision is the VCS commit the binary was built from, or "unknown".
	Revision string
	// Modified is true when the work tree had uncommitted changes at build time.
	Modified bool
	// Time is the commit time (RFC 3339) when known.
	Time string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Get returns the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi, version, revision)
}

// from combines the embedded build information with link-time overrides (tested without a binary).
func from(bi *debug.BuildInfo, versionOverride, revisionOverride string) Info {
	info := Info{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}
	if bi != nil {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			case "vcs.time":
				info.Time = s.Value
			}
		}
	}
	if versionOverride != "" {
		info.Version = versionOverride
	}
	if revisionOverride != "" {
		info.Revision = revisionOverride
		info.Modified = false
	}
	return info
}

// ShortRevision is the first 12 hex digits of the revision, with "-dirty" for a modified tree.
func (i Info) ShortRevision() string {
	r := i.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if i.Modified {
		r += "-dirty"
	}
	return r
}

// String is the line both binaries print for --version, e.g.
// "preflight v1.0.0 (revision 0123456789ab, go1.26.8)".
func (i Info) String() string {
	return fmt.Sprintf("%s (revision %s, %s)", i.Version, i.ShortRevision(), i.GoVersion)
}

// Line is String prefixed with the program name.
func (i Info) Line(program string) string { return program + " " + i.String() }
