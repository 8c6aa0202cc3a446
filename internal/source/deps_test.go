package source

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// cloudModules are the import path prefixes of the object stores' SDKs (and gocloud, which
// links them), which only the drivers' packages may import.
var cloudModules = []string{"cloud.google.com/", "github.com/Azure/", "github.com/AzureAD/", "github.com/aws/", "gocloud.dev/"}

func isCloud(pkg string) bool {
	for _, m := range cloudModules {
		if strings.HasPrefix(pkg, m) {
			return true
		}
	}
	return false
}

// goListDeps maps each package to every package it links (go list's Deps; tests excluded).
func goListDeps(t *testing.T, tags string, pkgs ...string) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	testutil.DependOn(t, "../..") // go list reads the imports of the whole module
	args := append([]string{"list", "-tags=" + tags, "-f", `{{.ImportPath}} {{join .Deps " "}}`}, pkgs...)
	out, err := exec.Command(gobin, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f[1:]
	}
	return deps
}

// TestCoreLinksNoCloudSDK: the decoder, the simulation, the findings, the engine and this
// package link none of the object stores' SDKs, so that a program built on them (a test binary
// included) stays small. Only internal/source/{s3,gcs,azure,cloud} may, imported by the mains.
func TestCoreLinksNoCloudSDK(t *testing.T) {
	const mod = "github.com/flinkpreflight/preflight/"
	var pkgs []string
	for _, p := range []string{"internal/checkpoint", "internal/rescale", "internal/findings", "internal/engine", "internal/source", "internal/source/cloud"} {
		pkgs = append(pkgs, mod+p)
	}
	deps := goListDeps(t, "", pkgs...)
	for _, p := range pkgs {
		var cloud []string
		for _, dep := range deps[p] {
			if isCloud(dep) {
				cloud = append(cloud, dep)
			}
		}
		switch {
		case p == mod+"internal/source/cloud" && len(cloud) == 0:
			// The check itself works: the aggregator does link the SDKs.
			t.Errorf("%s links no cloud SDK package: the prefixes above are stale", p)
		case p != mod+"internal/source/cloud" && len(cloud) > 0:
			t.Errorf("%s links %d cloud SDK packages, e.g. %s: import object-store drivers only in main packages (internal/source/cloud)", p, len(cloud), strings.Join(cloud[:min(3, len(cloud))], ", "))
		}
	}
	if len(deps) != len(pkgs) {
		t.Fatalf("go list answered for %d packages, want %d", len(deps), len(pkgs))
	}
}

// TestGCSDriverIsLean: the gs:// driver speaks the JSON API over net/http with
// golang.org/x/oauth2/google; it must not link Google's storage SDK (gRPC transport, xDS, envoy
// protos: resident in every binary before it reads anything; bench/README.md, "Binary
// footprint") nor gocloud.
func TestGCSDriverIsLean(t *testing.T) {
	const pkg = "github.com/flinkpreflight/preflight/internal/source/gcs"
	forbidden := []string{"cloud.google.com/go/storage", "gocloud.dev/", "google.golang.org/grpc", "google.golang.org/api/", "github.com/envoyproxy/", "github.com/cncf/xds/"}
	deps := goListDeps(t, "", pkg)
	if !slices.Contains(deps[pkg], "golang.org/x/oauth2/google") {
		t.Fatalf("%s does not link golang.org/x/oauth2/google: the dependency list is wrong (%d packages)", pkg, len(deps[pkg]))
	}
	for _, dep := range deps[pkg] {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// TestMainsWithoutCloud: the two binaries link the drivers, except when built with
// -tags preflight_nocloud (then they link no cloud SDK at all).
func TestMainsWithoutCloud(t *testing.T) {
	mains := []string{"github.com/flinkpreflight/preflight/client/preflight", "github.com/flinkpreflight/preflight/server/preflightd"}
	for _, tags := range []string{"", "preflight_nocloud"} {
		deps := goListDeps(t, tags, mains...)
		for _, m := range mains {
			n := 0
			for _, dep := range deps[m] {
				if isCloud(dep) {
					n++
				}
			}
			if (tags == "") != (n > 0) {
				t.Errorf("%s with tags %q links %d cloud SDK packages", m, tags, n)
			}
		}
	}
}
