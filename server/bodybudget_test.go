package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/flinkpreflight/preflight/internal/memmodel"
)

// TestJSONBodyBudget: a JSON body is reserved in the memory budget before the gateway reads it
// (4 × its length), held until the answer, refused with 413 when it could never fit and with
// 429 after the queue wait when the budget is in use; both name --memory-budget.
func TestJSONBodyBudget(t *testing.T) {
	noLeaks(t)
	file := readFile(t, "../testdata/compact-sink/_metadata")
	body := `{"checkpoint":{"metadata":"` + base64.StdEncoding.EncodeToString(file) + `"},"plan":{"defaultParallelism":2}}`
	n := int64(len(body))
	// Enough for the body and the inline check of the small file.
	budget := JSONBodyBytesPerByte*n + memmodel.RequestBytes(int64(len(file))) + 1<<10
	h := startInProcess(t, Config{MemoryBudget: budget, QueueWait: 100 * time.Millisecond})
	post := func(r io.Reader, length int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/v1/check", r)
		req.ContentLength = length
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.s.HTTPHandler().ServeHTTP(rec, req)
		return rec
	}

	if rec := post(strings.NewReader(body), n); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "VERDICT_") {
		t.Fatalf("a body that fits: HTTP %d %.300s", rec.Code, rec.Body)
	}

	// While the body arrives, its reservation is held, before anything is decoded.
	pr, pw := io.Pipe()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- post(pr, n) }()
	if _, err := io.WriteString(pw, body[:n/2]); err != nil {
		t.Fatal(err)
	}
	reserved := testutil.ToFloat64(h.s.metrics.memReserved)
	io.WriteString(pw, body[n/2:])
	pw.Close()
	if rec := <-done; rec.Code != http.StatusOK {
		t.Fatalf("the piped body: HTTP %d %.300s", rec.Code, rec.Body)
	}
	if want := float64(JSONBodyBytesPerByte * n); reserved != want {
		t.Errorf("reserved while the body arrived: %v bytes, want %v", reserved, want)
	}

	// A body whose reservation exceeds the budget can never fit: 413 at once, the body unread.
	big := fmt.Sprintf(`{"checkpoint":{"metadata":"%s"}}`, strings.Repeat("A", int(budget/JSONBodyBytesPerByte)))
	rec := post(strings.NewReader(big), int64(len(big)))
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "--memory-budget") || !strings.Contains(rec.Body.String(), `"code":8`) {
		t.Errorf("a body beyond the budget: HTTP %d %.300s, want 413 RESOURCE_EXHAUSTED naming --memory-budget", rec.Code, rec.Body)
	}

	// With the budget held by others, a body waits QueueWait and is refused with 429.
	g, err := h.s.adm.acquire(context.Background(), false, budget, false)
	if err != nil {
		t.Fatal(err)
	}
	rec = post(strings.NewReader(body), n)
	g.release()
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "--memory-budget") {
		t.Errorf("a body while the budget is held: HTTP %d %.300s, want 429 naming --memory-budget", rec.Code, rec.Body)
	}
	if used := testutil.ToFloat64(h.s.metrics.memReserved); used != 0 {
		t.Errorf("%v bytes still reserved after the requests", used)
	}
}
