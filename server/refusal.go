package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Admission refuses a request in one of two ways, as typed errors that each transport maps:
// gRPC to RESOURCE_EXHAUSTED (errors.go), HTTP to 413 or 429 (refusalHTTPCode).

// BudgetError is a request whose memory the budget cannot hold: never (Need > Budget), or, for
// a reservation that grows without waiting as an upload's bytes arrive (Growing), not now.
type BudgetError struct {
	// What says what needs the memory and how it was estimated, starting with its subject:
	// "this request needs an estimated 6.0 MiB of memory (2.0 MiB + 4 × the _metadata size)".
	What    string
	Need    int64
	Budget  int64
	Growing bool
	// Hint, when set, says what to do instead ("use the upload endpoint /v1/upload").
	Hint string
}

func (e *BudgetError) Error() string {
	msg := fmt.Sprintf("%s, more than the server's memory budget of %s (--memory-budget)", e.What, fmtBytes(e.Budget))
	if e.Growing {
		msg = fmt.Sprintf("%s and the server's memory budget of %s (--memory-budget) cannot hold it now", e.What, fmtBytes(e.Budget))
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// BusyError is a request that would fit an idle server but found no room within the queue
// wait: all check slots in use, or the memory budget held by others.
type BusyError struct {
	Waited     time.Duration // --queue-wait
	What       string        // what is in use, with the figures
	RetryAfter time.Duration // the advised delay (RetryInfo)
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("server busy after waiting %v (--queue-wait): %s; retry later or elsewhere", e.Waited, e.What)
}

// refusalHTTPCode is the HTTP status of an admission refusal: 413 for a request that can never
// fit, 429 for one that may fit later; 0 if err is no refusal.
func refusalHTTPCode(err error) int {
	var (
		be *BudgetError
		ue *BusyError
	)
	switch {
	case errors.As(err, &be) && be.Need > be.Budget:
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &be), errors.As(err, &ue):
		return http.StatusTooManyRequests
	}
	return 0
}
