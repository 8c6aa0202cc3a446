package server

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Result memoization. A CheckRescale answer depends only on the checkpoint's bytes, the label the
// report shows for it (source.Object.URI), the plan, the options and the server's engine (its
// catalog, fixed for the server's life). So a finished answer is cached under
//
//	(source CacheKey = location + size + mtime or ETag, label, plan, options)
//
// and the same question asked again, as an autoscaler does, costs a map lookup: no check slot,
// no simulation, no marshalling. A new version of the file has a new CacheKey, so it can never
// be answered from an older one; sourceIdentities bounds how long a CacheKey is trusted without
// asking the source again (--revalidate-interval). Errors are never cached (a deadline or a
// cancellation says nothing about the question). Inline bytes, uploads and discovered
// checkpoints (job, latest) are not memoized: they have no cheap identity.
//
// The plan and the options enter the key as their deterministic protobuf encoding, which is
// canonical for what the engine reads: map order does not matter, an unset message equals an
// empty one, and every field (including one added to the API later) is part of it. A plan
// naming operators by name, uid or ID in any case is first rewritten to their IDs where that is
// provably the same question (memokey.go), so those share an entry; other equal questions
// written differently ("1.18" vs "1.18.0", which findings quote as written) get separate entries,
// which costs only a miss. Identical first questions asked at once share one check
// (memoflight.go, flight.go). TestResultKeyCoversEveryField walks the request's fields with protoreflect so
// that a new field is classified, not forgotten.
//
// Cached answers are shared between requests and must not be modified: handlers and the gateway
// only read them. Their bytes count against the layout cache's bytes and the memory budget
// (layoutCache, admission), within ResultCacheBytes.

// memoResult is a cached answer: the message, for callers in process (the HTTP gateway, logs),
// and its wire encoding, which resultCodec sends to gRPC callers instead of marshalling again.
type memoResult struct {
	resp *pb.CheckRescaleResponse
	raw  []byte
}

// memoOverheadBytes approximates the map entry, list element and headers of one cached result,
// and the fixed part of the Go message.
const memoOverheadBytes = 512

// memoBytes is the memory one cached answer is counted for: its key and wire bytes, and the Go
// message, a few times its wire size (more for the smallest reports), which
// TestMemoBytesCoversTheMessage checks the count covers for every scenario and corpus file
// (bench/README.md, "Figures behind constants").
func memoBytes(key string, raw []byte) int64 {
	return int64(len(key)) + 5*int64(len(raw)) + memoOverheadBytes
}

// keyBufs are the buffers result keys are built in.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putKeyBuf returns a key buffer to the pool unless a huge plan grew it.
func putKeyBuf(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		keyBufs.Put(b)
	}
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// appendResultKey appends the result key of a question to b: the file version's identity and
// label, the identity of the job code the check runs with (jobcode.go: its jars' and catalogs'
// versions; "" for none), the plan (memokey.go; l is the file's layout when at hand, to resolve operator names)
// and the options. Each part is length-prefixed or self-delimiting, so no two different
// questions share a key.
func appendResultKey(b []byte, cacheKey, label, code string, l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(cacheKey)))
	b = append(b, cacheKey...)
	b = binary.AppendUvarint(b, uint64(len(label)))
	b = append(b, label...)
	b = binary.AppendUvarint(b, uint64(len(code)))
	b = append(b, code...)
	b, err := appendPlanKey(b, l, plan)
	if err != nil {
		return nil, err
	}
	return appendMessage(b, opts)
}

// appendMessage appends m's deterministic protobuf encoding, prefixed with its length.
func appendMessage(b []byte, m proto.Message) ([]byte, error) {
	n := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) // room for the length
	var err error
	if b, err = deterministic.MarshalAppend(b, m); err != nil {
		return nil, err
	}
	size := len(b) - n - 10
	// Move the encoding left over the unused part of the reserved length.
	var lenBuf [binary.MaxVarintLen64]byte
	lenBytes := binary.AppendUvarint(lenBuf[:0], uint64(size))
	copy(b[n:], lenBytes)
	copy(b[n+len(lenBytes):], b[n+10:])
	return b[:n+len(lenBytes)+size], nil
}

// memoizable reports whether a CheckRescale request may be answered from the result cache.
func memoizable(req *pb.CheckRescaleRequest) bool {
	return req.GetJob() == nil && !req.GetCheckpoint().GetLatest() && req.GetCheckpoint().GetUri() != ""
}

// cachedResult returns the answer cached for key, counting the lookup.
func (s *Server) cachedResult(ctx context.Context, key []byte) (*pb.CheckRescaleResponse, bool) {
	r, ok := s.cache.getResult(key)
	if !ok {
		return nil, false
	}
	s.metrics.results.WithLabelValues("hit").Inc()
	report := r.resp.GetReport()
	addLog(ctx, slog.String("source", report.GetCheckpoint().GetSource()), slog.String("result_cache", "hit"),
		slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return r.resp, true
}

// memoize caches a finished answer under key, in the room the memory budget leaves.
func (s *Server) memoize(k string, resp *pb.CheckRescaleResponse) {
	s.metrics.results.WithLabelValues("miss").Inc()
	if s.cache.maxResultBytes <= 0 {
		return
	}
	raw, err := proto.Marshal(resp)
	if err != nil {
		return // the RPC fails at marshalling anyway
	}
	r := &memoResult{resp: resp, raw: raw}
	s.encoded.Store(resp, raw)
	if !s.adm.resultPut(k, r, memoBytes(k, raw)) {
		s.encoded.Delete(resp)
	}
}

// resultCodec is gRPC's proto codec, except that a cached answer is sent as the bytes it was
// encoded to when it was cached (gRPC only reads them). It is the server's codec for every
// content-subtype, like the default, which answers unknown subtypes with proto too.
type resultCodec struct {
	encoding.CodecV2
	encoded *sync.Map // *pb.CheckRescaleResponse → []byte, for the results in the cache
}

func newResultCodec(encoded *sync.Map) resultCodec {
	return resultCodec{CodecV2: encoding.GetCodecV2("proto"), encoded: encoded}
}

func (c resultCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*pb.CheckRescaleResponse); ok {
		if raw, ok := c.encoded.Load(r); ok {
			return mem.BufferSlice{mem.SliceBuffer(raw.([]byte))}, nil
		}
	}
	return c.CodecV2.Marshal(v)
}
