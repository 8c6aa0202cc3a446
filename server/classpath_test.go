package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/classpath/classpathtest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestClasspathCheck(t *testing.T) {
	noLeaks(t)
	root := t.TempDir()
	home := filepath.Join(root, "flink")
	lib, plugins, err := classpathtest.SeedCluster(home)
	if err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(root, "jobs")
	os.MkdirAll(jobs, 0o755)
	seed, err := classpathtest.SeedJobJar(jobs)
	if err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(jobs, "garbage.jar")
	os.WriteFile(garbage, []byte("not a zip"), 0o644)
	outside := t.TempDir()
	secret, err := classpathtest.SeedJobJar(outside)
	if err != nil {
		t.Fatal(err)
	}
	// A symlink inside the allowed lib/ pointing outside the allowlist.
	evilLib := filepath.Join(root, "evil-lib")
	os.MkdirAll(evilLib, 0o755)
	if err := os.Symlink(secret, filepath.Join(evilLib, "escape.jar")); err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{Allow: []string{root}, MaxUploadBytes: 1 << 20})
	ctx := context.Background()

	rep, err := h.c.Classpath(ctx, &pb.ClasspathCheckRequest{JobJarUri: seed, FlinkLibUri: lib, PluginsUri: plugins})
	if err != nil {
		t.Fatal(err)
	}
	if rep.GetVerdict() != pb.Verdict_VERDICT_DENY || rep.GetFindings()[0].GetRuleId() != "PF301" ||
		!strings.Contains(rep.GetFindings()[0].GetMessage(), classpathtest.ProducerRecord) {
		t.Fatalf("seed: %v %v", rep.GetVerdict(), rep.GetFindings())
	}
	// Through the Flink home and a file:// URI: the same answer.
	rep2, err := h.c.Classpath(ctx, &pb.ClasspathCheckRequest{JobJarUri: "file://" + seed, FlinkHomeUri: home})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.GetVerdict() != rep.GetVerdict() || len(rep2.GetFindings()) != len(rep.GetFindings()) {
		t.Fatalf("home: %v, %d findings vs %d", rep2.GetVerdict(), len(rep2.GetFindings()), len(rep.GetFindings()))
	}

	// HTTP/JSON gives the same verdict.
	body, _ := protojson.Marshal(&pb.ClasspathCheckRequest{JobJarUri: seed, FlinkLibUri: lib, PluginsUri: plugins})
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/classpath", strings.NewReader(string(body))))
	var resp pb.ClasspathCheckResponse
	if rec.Code != http.StatusOK || protojson.Unmarshal(rec.Body.Bytes(), &resp) != nil || resp.GetReport().GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}

	big := filepath.Join(jobs, "big.jar")
	f, _ := os.Create(big)
	f.Truncate(2 << 20)
	f.Close()
	for _, tc := range []struct {
		name string
		req  *pb.ClasspathCheckRequest
		code codes.Code
		msg  string
	}{
		{"no job jar", &pb.ClasspathCheckRequest{FlinkLibUri: lib}, codes.InvalidArgument, "job_jar_uri"},
		{"no lib", &pb.ClasspathCheckRequest{JobJarUri: seed}, codes.InvalidArgument, "flink_lib_uri"},
		{"outside the allowlist", &pb.ClasspathCheckRequest{JobJarUri: secret, FlinkLibUri: lib}, codes.PermissionDenied, "outside the allowlist"},
		{"dot dot", &pb.ClasspathCheckRequest{JobJarUri: jobs + "/../jobs/orders-job-1.0.jar", FlinkLibUri: lib}, codes.PermissionDenied, ".."},
		{"symlink out of lib", &pb.ClasspathCheckRequest{JobJarUri: seed, FlinkLibUri: evilLib}, codes.PermissionDenied, "symlink"},
		{"missing", &pb.ClasspathCheckRequest{JobJarUri: filepath.Join(jobs, "nope.jar"), FlinkLibUri: lib}, codes.NotFound, "nope.jar"},
		{"not a jar", &pb.ClasspathCheckRequest{JobJarUri: garbage, FlinkLibUri: lib}, codes.InvalidArgument, "no end of central directory"},
		{"too large", &pb.ClasspathCheckRequest{JobJarUri: big, FlinkLibUri: lib}, codes.ResourceExhausted, "limit"},
		{"object store", &pb.ClasspathCheckRequest{JobJarUri: "s3://bucket/job.jar", FlinkLibUri: lib}, codes.InvalidArgument, "s3://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.c.Classpath(ctx, tc.req)
			st, _ := status.FromError(err)
			if st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
				t.Fatalf("got %v %q, want %v containing %q", st.Code(), st.Message(), tc.code, tc.msg)
			}
		})
	}
}
