package server

import (
	"fmt"
	"net"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// JSONBodyBytesPerByte is the memory decoding one byte of a JSON request body takes: the gateway
// holds the body, its JSON value, and the decoded request (base64 inline metadata decodes to 3/4
// of its text), so about 3–4 × the body while the request runs.
const JSONBodyBytesPerByte = 4

// withBodyBudget reserves a JSON request's body in the memory budget before the gateway reads and
// decodes it, and holds the reservation until the handler returns: bodies count like uploads (a
// peer's arriving bodies against its share of the budget, waiting at most QueueWait), so many
// concurrent large bodies wait or are refused instead of growing the heap past the budget. A
// body whose length is unknown (chunked) reserves for the largest body the JSON API accepts. A
// body that could never fit the budget is answered 413, one that does not fit now 429 with
// RetryInfo (refusalHTTPCode); both carry RESOURCE_EXHAUSTED naming --memory-budget.
func (s *Server) withBodyBudget(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.ContentLength
		if n == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if n < 0 || n > s.jsonBodyLimit() {
			// Unknown: the largest body accepted. Larger: refused by the body limit unread.
			n = s.jsonBodyLimit()
		}
		mem := JSONBodyBytesPerByte * n
		if mem > s.cfg.MemoryBudget {
			writeStatus(w, http.StatusRequestEntityTooLarge, &BudgetError{
				What: fmt.Sprintf("request body of %d bytes needs an estimated %s of memory to decode (%d × its size)", n, fmtBytes(mem), JSONBodyBytesPerByte),
				Need: mem, Budget: s.cfg.MemoryBudget, Hint: "use the upload endpoint " + UploadPath,
			})
			return
		}
		ctx := r.Context()
		if addr, err := net.ResolveTCPAddr("tcp", r.RemoteAddr); err == nil {
			ctx = peer.NewContext(ctx, &peer.Peer{Addr: addr})
		}
		g, err := s.adm.acquire(ctx, false, mem, true)
		if err != nil {
			code := refusalHTTPCode(err)
			if code == 0 {
				code = httpStatusOf(status.Code(err))
			}
			writeStatus(w, code, err)
			return
		}
		defer g.release()
		next.ServeHTTP(w, r)
	})
}

// jsonBodyLimit is the largest JSON body the API accepts (newHTTPHandler's MaxBytesHandler):
// the gRPC receive limit, base64 included.
func (s *Server) jsonBodyLimit() int64 { return int64(s.cfg.maxRecvMsgBytes()) * 4 / 3 }

// writeStatus answers with the gateway's JSON error format (a google.rpc.Status).
func writeStatus(w http.ResponseWriter, httpCode int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpCode)
	b, _ := protojson.Marshal(status.Convert(err).Proto())
	w.Write(b)
}

// httpStatusOf maps the codes admission returns besides its refusals (the caller's context
// ended while waiting).
func httpStatusOf(c codes.Code) int {
	switch c {
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.Canceled:
		return 499 // client closed the request, as grpc-gateway maps CANCELLED
	}
	return http.StatusInternalServerError
}
