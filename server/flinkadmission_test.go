package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flinkadmission "github.com/flinkpreflight/preflight/internal/admission"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
)

// admissionServer is a daemon's HTTP listener allowed to read testdata and to call the fake Flink
// REST (and, when given, a REST URL that is down), with the admission policy cfg.
func admissionServer(t *testing.T, cfg flinkadmission.Config, extraAllow ...string) (*httptest.Server, *flinkresttest.Server) {
	t.Helper()
	td := testdataDir(t)
	fake := flinkresttest.Start(t, flinkresttest.Job{CheckpointPath: "file:" + filepath.Join(td, "compact-sink")})
	if cfg.RESTTemplate == "" {
		cfg.RESTTemplate = fake.URL
	}
	h := startInProcess(t, Config{Allow: append([]string{td, fake.URL}, extraAllow...), FlinkAdmission: cfg})
	srv := httptest.NewServer(h.s.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv, fake
}

// review wraps a fixture of internal/admission/testdata in an AdmissionReview UPDATE.
func review(t *testing.T, fixture, uid string) []byte {
	t.Helper()
	obj, err := os.ReadFile(filepath.Join("..", "internal", "admission", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": uid, "kind": map[string]string{"group": "flink.apache.org", "version": "v1beta1", "kind": "FlinkDeployment"},
			"resource":  map[string]string{"group": "flink.apache.org", "version": "v1beta1", "resource": "flinkdeployments"},
			"operation": "UPDATE", "name": "compact-sink", "namespace": "flink", "object": json.RawMessage(obj),
			"userInfo": map[string]any{"username": "alice"}, "dryRun": false,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reviewAnswer is the response of an AdmissionReview, decoded strictly.
type reviewAnswer struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   struct {
		UID     string `json:"uid"`
		Allowed bool   `json:"allowed"`
		Status  *struct {
			Code    int32  `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		Warnings []string `json:"warnings"`
	} `json:"response"`
}

func postReview(t *testing.T, srv *httptest.Server, body []byte) reviewAnswer {
	t.Helper()
	code, b := post(t, srv.URL+FlinkAdmissionPath, body)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var out reviewAnswer
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
		t.Fatalf("%s", b)
	}
	return out
}

// TestFlinkAdmissionWebhook is issue #27's done-when: the compact-sink job raised from 4 to 8.
func TestFlinkAdmissionWebhook(t *testing.T) {
	srv, fake := admissionServer(t, flinkadmission.Config{})
	tests := []struct {
		fixture  string
		allowed  bool
		restUsed bool
		want     []string
	}{
		{"deployment-overrides-4-to-8.json", false, true, []string{"PF101", "FLINK-31689", "keep 4", "compact-operator", "4 -> 8"}},
		{"deployment-parallelism-4-to-8.json", false, true, []string{"PF101", "FLINK-31689", "keep 4"}},
		{"deployment-compact-down.json", true, true, []string{"allowed"}},
		{"deployment-stateless.json", true, false, []string{"stateless"}},
		{"deployment-image-only.json", true, false, []string{"touches no parallelism"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			before := fake.Requests.Load()
			out := postReview(t, srv, review(t, tt.fixture, "uid-"+tt.fixture))
			r := out.Response
			if r.UID != "uid-"+tt.fixture || r.Allowed != tt.allowed || r.Status == nil {
				t.Fatalf("%+v", out)
			}
			if used := fake.Requests.Load() > before; used != tt.restUsed {
				t.Errorf("REST used %v, want %v", used, tt.restUsed)
			}
			t.Logf("message: %s\nwarnings: %q", r.Status.Message, r.Warnings)
			if !tt.allowed && r.Status.Code != 403 {
				t.Errorf("code %d", r.Status.Code)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Status.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, r.Status.Message)
				}
			}
		})
	}
}

func TestFlinkAdmissionRESTDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	host := strings.TrimPrefix(downURL, "http://")
	for _, tt := range []struct {
		name    string
		closed  bool
		allowed bool
	}{{"open", false, true}, {"closed", true, false}} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := admissionServer(t, flinkadmission.Config{RESTTemplate: downURL, FailClosed: tt.closed}, downURL)
			r := postReview(t, srv, review(t, "deployment-overrides-4-to-8.json", "u1")).Response
			if r.Allowed != tt.allowed || r.Status == nil || !strings.Contains(r.Status.Message, host) {
				t.Fatalf("%+v", r)
			}
			t.Logf("message: %s\nwarnings: %q", r.Status.Message, r.Warnings)
			if tt.allowed && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], host) || strings.Contains(r.Warnings[0], "\n")) {
				t.Errorf("warnings %q", r.Warnings)
			}
			if !tt.allowed && r.Status.Code != 500 {
				t.Errorf("code %d", r.Status.Code)
			}
		})
	}
}

func TestFlinkAdmissionNotAllowlisted(t *testing.T) {
	srv, fake := admissionServer(t, flinkadmission.Config{RESTTemplate: "http://{name}-rest.{namespace}:{port}", FailClosed: true})
	r := postReview(t, srv, review(t, "deployment-overrides-4-to-8.json", "u2")).Response
	if r.Allowed || !strings.Contains(r.Status.Message, "compact-sink-rest.flink:8081") || fake.Requests.Load() != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestFlinkAdmissionResource(t *testing.T) {
	srv, _ := admissionServer(t, flinkadmission.Config{})
	obj, err := os.ReadFile(filepath.Join("..", "internal", "admission", "testdata", "deployment-overrides-4-to-8.json"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+FlinkAdmissionResourcePath, "application/json", bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out plainAnswer
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Allowed || out.Code != 403 || !strings.Contains(out.Message, "keep 4") {
		t.Fatalf("%+v", out)
	}
}

// TestFlinkAdmissionResourceQuery: the operator plugin's own failure policy and deadline replace
// the daemon's on the plain route.
func TestFlinkAdmissionResourceQuery(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	srv, _ := admissionServer(t, flinkadmission.Config{RESTTemplate: downURL}, downURL)
	obj, err := os.ReadFile(filepath.Join("..", "internal", "admission", "testdata", "deployment-overrides-4-to-8.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query   string
		code    int
		allowed bool
	}{
		{"", 200, true}, // the daemon's policy: open
		{"?onFailure=closed", 200, false},
		{"?onFailure=open&timeout=3s", 200, true},
		{"?onFailure=shut", 400, false},
		{"?timeout=0s", 400, false},
		{"?timeout=soon", 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, err := http.Post(srv.URL+FlinkAdmissionResourcePath+tt.query, "application/json", bytes.NewReader(obj))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tt.code)
			}
			if tt.code != 200 {
				return
			}
			var out plainAnswer
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.Allowed != tt.allowed || !strings.Contains(out.Message, strings.TrimPrefix(downURL, "http://")) {
				t.Fatalf("%+v", out)
			}
		})
	}
}

func TestResourceQueryTimeout(t *testing.T) {
	tests := []struct {
		daemon time.Duration
		query  string
		want   time.Duration
	}{
		{0, "timeout=2s", 2 * time.Second},
		{0, "timeout=1m", flinkadmission.DefaultTimeout},
		{3 * time.Second, "timeout=4500ms", 3 * time.Second},
		{3 * time.Second, "", 3 * time.Second},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", FlinkAdmissionResourcePath+"?"+tt.query, nil)
		cfg, err := resourceQuery(flinkadmission.Config{Timeout: tt.daemon}, r)
		if err != nil || cfg.Timeout != tt.want {
			t.Errorf("%v %q: %v %v, want %v", tt.daemon, tt.query, cfg.Timeout, err, tt.want)
		}
	}
}

func TestFlinkAdmissionBadRequests(t *testing.T) {
	srv, _ := admissionServer(t, flinkadmission.Config{})
	tests := []struct {
		name, path, ctype, body string
		code                    int
	}{
		{"not json", FlinkAdmissionPath, "application/json", "{", 400},
		{"no request", FlinkAdmissionPath, "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, 400},
		{"v1beta1", FlinkAdmissionPath, "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`, 400},
		{"content type", FlinkAdmissionPath, "text/plain", `{}`, 415},
		{"too large", FlinkAdmissionResourcePath, "application/json", strings.Repeat(" ", maxAdmissionBody+1), 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+tt.path, tt.ctype, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Fatalf("%d, want %d", resp.StatusCode, tt.code)
			}
		})
	}
	// DELETE carries no object: allowed without a check.
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"d1","operation":"DELETE","object":null}}`
	if r := postReview(t, srv, []byte(body)).Response; !r.Allowed || r.UID != "d1" {
		t.Fatalf("%+v", r)
	}
}
