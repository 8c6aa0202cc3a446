package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	flinkadmission "github.com/flinkpreflight/preflight/internal/admission"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/statefiles"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Paths of the Flink Kubernetes Operator admission: a Kubernetes ValidatingWebhook speaking
// AdmissionReview admission.k8s.io/v1, and the plain form taking just the resource (for a
// FlinkResourceValidator plugin inside the operator).
const (
	FlinkAdmissionPath         = "/v1/admission/flink"
	FlinkAdmissionResourcePath = "/v1/admission/flink/resource"
	// maxAdmissionBody bounds an AdmissionReview: the API server sends at most its own request
	// limit, and a FlinkDeployment with its status and lastReconciledSpec is far below this.
	maxAdmissionBody = 4 << 20
	// maxWarningLen keeps each warning within what the API server passes on unchanged.
	maxWarningLen = 256
)

func (s *Server) registerFlinkAdmission(mux *http.ServeMux) {
	mux.Handle("POST "+FlinkAdmissionPath, withBodyDeadline(s.cfg.HTTPBodyTimeout, http.HandlerFunc(s.serveAdmissionReview)))
	mux.Handle("POST "+FlinkAdmissionResourcePath, withBodyDeadline(s.cfg.HTTPBodyTimeout, http.HandlerFunc(s.serveAdmissionResource)))
}

// admissionReview is admission.k8s.io/v1 AdmissionReview, the fields used.
type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

type admissionRequest struct {
	UID       string          `json:"uid"`
	Operation string          `json:"operation"`
	Object    json.RawMessage `json:"object"`
}

type admissionResponse struct {
	UID      string           `json:"uid"`
	Allowed  bool             `json:"allowed"`
	Status   *admissionStatus `json:"status,omitempty"`
	Warnings []string         `json:"warnings,omitempty"`
}

// admissionStatus is metav1.Status, the fields a webhook sets.
type admissionStatus struct {
	Code    int32  `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// plainAnswer is the answer of FlinkAdmissionResourcePath (query: see resourceQuery).
type plainAnswer struct {
	Allowed  bool     `json:"allowed"`
	Code     int32    `json:"code,omitempty"`
	Message  string   `json:"message"`
	Warnings []string `json:"warnings,omitempty"`
}

func (s *Server) serveAdmissionReview(w http.ResponseWriter, r *http.Request) {
	body, ok := readAdmissionBody(w, r)
	if !ok {
		return
	}
	var rev admissionReview
	if err := json.Unmarshal(body, &rev); err != nil {
		http.Error(w, "AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if rev.APIVersion != "admission.k8s.io/v1" || rev.Kind != "AdmissionReview" || rev.Request == nil || rev.Request.UID == "" {
		http.Error(w, "want an AdmissionReview (admission.k8s.io/v1) with request.uid", http.StatusBadRequest)
		return
	}
	resp := &admissionResponse{UID: rev.Request.UID, Allowed: true}
	op := rev.Request.Operation
	if (op == "CREATE" || op == "UPDATE") && len(rev.Request.Object) > 0 {
		a := s.admitFlink(r.Context(), rev.Request.Object, s.cfg.FlinkAdmission, "uid="+rev.Request.UID+" op="+op)
		resp.Allowed, resp.Warnings = a.Allowed, warnings(a.Warnings)
		if a.Message != "" {
			resp.Status = &admissionStatus{Message: a.Message}
			if !a.Allowed {
				resp.Status.Code = a.Code
			}
		}
	}
	writeJSON(w, admissionReview{APIVersion: rev.APIVersion, Kind: rev.Kind, Response: resp})
}

func (s *Server) serveAdmissionResource(w http.ResponseWriter, r *http.Request) {
	cfg, err := resourceQuery(s.cfg.FlinkAdmission, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body, ok := readAdmissionBody(w, r)
	if !ok {
		return
	}
	a := s.admitFlink(r.Context(), body, cfg, "plain")
	writeJSON(w, plainAnswer{Allowed: a.Allowed, Code: a.Code, Message: a.Message, Warnings: a.Warnings})
}

// resourceQuery applies the caller's policy to the plain route: onFailure=open|closed replaces
// --admission-failure-policy (the operator plugin follows its own), and timeout (a Go duration)
// shortens --admission-timeout, so the daemon answers before the caller gives up.
func resourceQuery(cfg flinkadmission.Config, r *http.Request) (flinkadmission.Config, error) {
	q := r.URL.Query()
	switch p := q.Get("onFailure"); p {
	case "":
	case "open", "closed":
		cfg.FailClosed = p == "closed"
	default:
		return cfg, fmt.Errorf("onFailure %q: want open or closed", p)
	}
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("timeout %q: want a positive duration such as 4500ms", v)
		}
		if cfg.Timeout <= 0 {
			cfg.Timeout = flinkadmission.DefaultTimeout
		}
		cfg.Timeout = min(cfg.Timeout, d)
	}
	return cfg, nil
}

func readAdmissionBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "want Content-Type application/json", http.StatusUnsupportedMediaType)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAdmissionBody))
	if err != nil {
		code := http.StatusBadRequest
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "body: "+err.Error(), code)
		return nil, false
	}
	return body, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// warnings are single lines of at most maxWarningLen bytes, as the API server passes them on.
func warnings(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		w = strings.Join(strings.Fields(w), " ")
		if len(w) > maxWarningLen {
			w = strings.ToValidUTF8(w[:maxWarningLen-3], "") + "..."
		}
		out = append(out, w)
	}
	return out
}

// admitFlink runs one admission decision and logs it.
func (s *Server) admitFlink(ctx context.Context, obj []byte, cfg flinkadmission.Config, what string) flinkadmission.Answer {
	start := time.Now()
	a := flinkadmission.Review(ctx, obj, cfg, admissionBackend{s})
	s.log.Info("flink admission", slog.String("request", what), slog.Bool("allowed", a.Allowed), slog.Bool("checked", a.Checked),
		slog.Int("code", int(a.Code)), slog.Duration("took", time.Since(start)))
	return a
}

// admissionBackend is the Decide path (decide.go) for an admission: discovery of the job and its
// checkpoint, or the savepoint the resource names, then decision.Decide on the proposal.
type admissionBackend struct{ s *Server }

func (b admissionBackend) Decide(ctx context.Context, t flinkadmission.Target, propose func([]flinkadmission.Vertex) map[string]int32) (*pb.DecideResponse, error) {
	var job *pb.FlinkJob
	var src *pb.CheckpointSource
	if t.JobID != "" {
		job = &pb.FlinkJob{RestUrl: t.RESTURL, JobId: t.JobID}
	} else {
		src = &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: t.Savepoint}}
	}
	d, err := b.s.discover(ctx, job, src)
	if err != nil {
		return nil, err
	}
	defer d.mem.release()
	var vs []flinkadmission.Vertex
	if d.job != nil {
		for _, v := range d.job.Vertices {
			vs = append(vs, flinkadmission.Vertex{ID: v.ID, Parallelism: v.Parallelism})
		}
	} else {
		for _, op := range d.layout.Operators {
			vs = append(vs, flinkadmission.Vertex{ID: op.ID.String(), Parallelism: op.Parallelism})
		}
	}
	proposal := propose(vs)
	if len(proposal) == 0 {
		return &pb.DecideResponse{Action: pb.DecisionAction_DECISION_ACTION_APPROVE, Checkpoint: d.label, CheckpointChoice: d.choice}, nil
	}
	slot, err := b.s.adm.acquire(ctx, true, 0, false) // admission.go: the simulation holds a check slot
	if err != nil {
		return nil, err
	}
	defer slot.release()
	in := decision.Input{
		Layout: d.layout, Source: d.label, Job: d.job, Placement: d.placement, Choice: d.choice,
		Request: &pb.DecideRequest{Job: job, Checkpoint: src, ProposedParallelism: proposal},
	}
	// verify_files is on for admission, with the short budget a webhook can afford.
	in.Files, in.FileFindings = fileFacts(b.s.verifyFiles(ctx, readSource(src, d.label), d.label, nil, true, statefiles.AdmissionBudget))
	return decision.Decide(ctx, b.s.engine(ctx), in)
}
