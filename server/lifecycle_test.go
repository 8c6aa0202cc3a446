package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestDiffCheckpoints(t *testing.T) {
	td := testdataDir(t)
	dir := filepath.Join(td, scenarios.SeriesDir)
	series := scenarios.KafkaOrphanUnionSeries()
	h := startInProcess(t, Config{Allow: []string{td}})
	api := pb.NewPreflightServiceClient(h.c.Conn())
	uri := func(p string) *pb.CheckpointSource {
		return &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: p}}
	}
	req := &pb.DiffCheckpointsRequest{OldCheckpoint: uri(filepath.Join(dir, series[1].Folder)), NewCheckpoint: uri(filepath.Join(dir, series[2].Folder))}
	resp, err := api.DiffCheckpoints(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetFindings()) == 0 || resp.GetFindings()[0].GetId() != "LC301" || resp.GetFindings()[0].GetSeverity() != pb.Severity_SEVERITY_WARNING {
		t.Fatalf("findings %v", resp.GetFindings())
	}
	var union *pb.LifecycleStateDiff
	for _, s := range resp.GetOperators()[0].GetStates() {
		if s.GetName() == "topic-partition-offset-states" {
			union = s
		}
	}
	if union == nil || union.GetOldElements() != 256 || union.GetNewElements() != 1024 {
		t.Fatalf("union %v", union)
	}
	// HTTP: the same answer.
	body, _ := protojson.Marshal(req)
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/diff", strings.NewReader(string(body))))
	var viaHTTP pb.DiffCheckpointsResponse
	if rec.Code != 200 || protojson.Unmarshal(rec.Body.Bytes(), &viaHTTP) != nil || !proto.Equal(resp, &viaHTTP) {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	// Errors: missing side, path outside the allowlist, missing file.
	for _, tt := range []struct {
		req  *pb.DiffCheckpointsRequest
		code codes.Code
	}{
		{&pb.DiffCheckpointsRequest{OldCheckpoint: req.OldCheckpoint}, codes.InvalidArgument},
		{&pb.DiffCheckpointsRequest{OldCheckpoint: req.OldCheckpoint, NewCheckpoint: uri("/etc")}, codes.PermissionDenied},
		{&pb.DiffCheckpointsRequest{OldCheckpoint: req.OldCheckpoint, NewCheckpoint: uri(filepath.Join(dir, "nope"))}, codes.NotFound},
	} {
		if _, err := api.DiffCheckpoints(context.Background(), tt.req); status.Code(err) != tt.code {
			t.Errorf("%v: %v, want %v", tt.req, err, tt.code)
		}
	}
}
