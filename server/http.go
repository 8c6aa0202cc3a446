package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// newHTTPHandler builds the HTTP face: the generated grpc-gateway handler over the in-process
// connection to the gRPC server (inproc.go; no loopback socket, no second TLS setup), so every
// HTTP call passes the gRPC server's interceptors, limits and handlers.
func (s *Server) newHTTPHandler(reg *prometheus.Registry) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, newJSONBodyMarshaler()),
		runtime.WithIncomingHeaderMatcher(func(k string) (string, bool) {
			if strings.EqualFold(k, RequestIDHeader) {
				return RequestIDHeader, true
			}
			if strings.EqualFold(k, runtime.MetadataHeaderPrefix+httpPeerKey) {
				return "", false // set below from the connection, never from the caller
			}
			return runtime.DefaultHeaderMatcher(k)
		}),
		runtime.WithMetadata(func(_ context.Context, r *http.Request) metadata.MD {
			return metadata.Pairs(httpPeerKey, r.RemoteAddr)
		}),
		runtime.WithOutgoingHeaderMatcher(func(k string) (string, bool) {
			if k == RequestIDHeader || k == "content-type" {
				// withRequestID has set the ID, to the same value; gRPC's own content type
				// (application/grpc) says nothing about the HTTP answer.
				return "", false
			}
			return runtime.MetadataHeaderPrefix + k, true
		}),
		runtime.WithRoutingErrorHandler(methodNotAllowed),
	)
	if err := pb.RegisterPreflightServiceHandler(context.Background(), gw, s.gwConn); err != nil {
		return nil, err
	}
	// JSON is ~4/3 the size of the bytes it carries (base64 inline metadata).
	bodyLimit := int64(s.cfg.maxRecvMsgBytes()) * 4 / 3
	mux := http.NewServeMux()
	limited := http.MaxBytesHandler(gw, bodyLimit)
	v1 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Refuse an announced oversize body with the code gRPC callers get for it; a chunked one
		// is cut by MaxBytesHandler (the gateway then answers 400).
		if r.ContentLength > bodyLimit {
			_, out := runtime.MarshalerForRequest(gw, r)
			err := status.Errorf(codes.ResourceExhausted, "request body of %d bytes exceeds the limit of %d bytes; use CheckRescaleUpload over gRPC", r.ContentLength, bodyLimit)
			runtime.HTTPError(r.Context(), gw, out, w, r, err)
			return
		}
		limited.ServeHTTP(w, r)
	})
	mux.Handle("/v1/", withWriteIdle(s.cfg.SendIdleTimeout, withBodyDeadline(s.cfg.HTTPBodyTimeout, s.withBodyBudget(v1))))
	s.registerUpload(mux)
	s.registerFlinkAdmission(mux)
	s.registerWeb(mux)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	// On the API listener /healthz keeps its original meaning, "ready to take work" (503 while
	// draining); the ops listener separates liveness from readiness.
	mux.HandleFunc("GET /healthz", s.readyz)
	mux.HandleFunc("GET /readyz", s.readyz)
	return withRequestID(mux), nil
}

// apiMethods maps each path of the JSON API to its methods, from the OpenAPI document generated
// from the same HTTP rules as the gateway.
var apiMethods = func() map[string][]string {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	out := map[string][]string{}
	if json.Unmarshal(openAPI, &doc) != nil {
		return out
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			out[p] = append(out[p], strings.ToUpper(m))
		}
		sort.Strings(out[p])
	}
	return out
}()

// allowedMethods are the methods of the API path matching p ("{x}" matches one segment).
func allowedMethods(p string) []string {
	if m, ok := apiMethods[p]; ok {
		return m
	}
	segs := strings.Split(p, "/")
	for tmpl, m := range apiMethods {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		match := true
		for i := range ts {
			if ts[i] != segs[i] && !strings.HasPrefix(ts[i], "{") {
				match = false
				break
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// methodNotAllowed answers a known path with the wrong method 405 with Allow (the gateway's
// default says 501 Unimplemented); other routing errors keep the default.
func methodNotAllowed(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	allow := allowedMethods(r.URL.Path)
	if code != http.StatusMethodNotAllowed || len(allow) == 0 {
		runtime.DefaultRoutingErrorHandler(ctx, mux, m, w, r, code)
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	w.Header().Set("Content-Type", m.ContentType(nil))
	st := status.New(codes.Unimplemented, fmt.Sprintf("method %s not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
	body, err := m.Marshal(st.Proto())
	w.WriteHeader(http.StatusMethodNotAllowed)
	if err == nil {
		w.Write(body)
	}
}
