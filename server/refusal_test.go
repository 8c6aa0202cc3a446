package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRefusals: each admission refusal maps to RESOURCE_EXHAUSTED with its message over gRPC
// (RetryInfo for busy), through toStatus and wrapped, and to 413 or 429 over HTTP.
func TestRefusals(t *testing.T) {
	never := &BudgetError{What: "this request needs an estimated 6.0 MiB of memory", Need: 6 << 20, Budget: 4 << 20}
	growing := &BudgetError{What: "upload needs an estimated 3.0 MiB of memory", Need: 3 << 20, Budget: 4 << 20, Growing: true}
	hinted := &BudgetError{What: "request body of 9 bytes", Need: 36, Budget: 8, Hint: "use the upload endpoint " + UploadPath}
	busy := &BusyError{Waited: time.Second, What: "all 2 check slots in use (--max-concurrent)", RetryAfter: time.Second}
	for _, tc := range []struct {
		name  string
		err   error
		msg   string
		http  int
		retry bool
	}{
		{"never fits", never, "this request needs an estimated 6.0 MiB of memory, more than the server's memory budget of 4.0 MiB (--memory-budget)", http.StatusRequestEntityTooLarge, false},
		{"growing, not now", growing, "upload needs an estimated 3.0 MiB of memory and the server's memory budget of 4.0 MiB (--memory-budget) cannot hold it now", http.StatusTooManyRequests, false},
		{"with a hint", hinted, "request body of 9 bytes, more than the server's memory budget of 8 bytes (--memory-budget); use the upload endpoint " + UploadPath, http.StatusRequestEntityTooLarge, false},
		{"busy", busy, "server busy after waiting 1s (--queue-wait): all 2 check slots in use (--max-concurrent); retry later or elsewhere", http.StatusTooManyRequests, true},
		{"wrapped", fmt.Errorf("decide: %w", busy), "decide: server busy after waiting 1s (--queue-wait): all 2 check slots in use (--max-concurrent); retry later or elsewhere", http.StatusTooManyRequests, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status.Convert(toStatus(context.Background(), tc.err))
			if st.Code() != codes.ResourceExhausted || st.Message() != tc.msg {
				t.Errorf("status %v %q, want RESOURCE_EXHAUSTED %q", st.Code(), st.Message(), tc.msg)
			}
			retry := false
			for _, d := range st.Details() {
				_, ok := d.(*errdetails.RetryInfo)
				retry = retry || ok
			}
			if retry != tc.retry {
				t.Errorf("RetryInfo %v, want %v", retry, tc.retry)
			}
			if got := refusalHTTPCode(tc.err); got != tc.http {
				t.Errorf("HTTP %d, want %d", got, tc.http)
			}
		})
	}
	if got := refusalHTTPCode(context.Canceled); got != 0 {
		t.Errorf("HTTP code of a cancellation %d, want 0 (not a refusal)", got)
	}
}
