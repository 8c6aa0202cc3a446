package flinkrest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
)

// bodies answers every request with the fuzzed body for its path.
type bodies map[string][]byte

func (b bodies) RoundTrip(r *http.Request) (*http.Response, error) {
	body, ok := b[r.URL.Path]
	code := http.StatusOK
	if !ok {
		code, body = http.StatusNotFound, []byte(`{"errors":["not found"]}`)
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}, Request: r}, nil
}

// FuzzJob feeds arbitrary REST responses to the decoder and the checkpoint choice: they must
// yield a job or a typed error, never a panic.
func FuzzJob(f *testing.F) {
	fake := flinkresttest.Start(f, flinkresttest.Job{Version: "2.1", CheckpointPath: "s3://b/ck/chk-1"})
	get := func(path string) []byte {
		resp, err := http.Get(fake.URL + path)
		if err != nil {
			f.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	job := "/jobs/" + flinkresttest.DefaultJobID
	f.Add(get(job), get(job+"/checkpoints"), get(job+"/checkpoints/config"))
	f.Add([]byte(`{"vertices":[{"id":"x","parallelism":-1}],"stream-graph":{"nodes":[{"id":"a","job_vertex_id":"x"}]}}`), []byte(`{"latest":{"completed":{"id":9,"external_path":"hdfs://x"},"restored":{"id":3}}}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, details, checkpoints, config []byte) {
		c, err := flinkrest.New("http://jm:8081", flinkrest.Options{Transport: bodies{job: details, job + "/checkpoints": checkpoints, job + "/checkpoints/config": config, "/config": []byte(`{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		j, err := c.Job(context.Background(), flinkresttest.DefaultJobID)
		if err != nil {
			var fe *flinkrest.Error
			if !strings.HasPrefix(err.Error(), "flink rest:") && !asError(err, &fe) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if r, err := j.Latest(); err == nil {
			flinkrest.SourceURI(r.ExternalPath)
		}
	})
}

func asError(err error, fe **flinkrest.Error) bool {
	e, ok := err.(*flinkrest.Error)
	*fe = e
	return ok
}
