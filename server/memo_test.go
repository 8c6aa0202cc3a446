package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func resultKey(t *testing.T, cacheKey, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) string {
	t.Helper()
	b, err := appendResultKey(nil, cacheKey, label, "", nil, plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nonDefault sets field fd of m to a value other than its default, recursing into messages so that
// a nested field is set too.
func nonDefault(t *testing.T, m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	t.Helper()
	scalar := func(fd protoreflect.FieldDescriptor) protoreflect.Value {
		switch fd.Kind() {
		case protoreflect.BoolKind:
			return protoreflect.ValueOfBool(true)
		case protoreflect.EnumKind:
			return protoreflect.ValueOfEnum(fd.Enum().Values().Get(fd.Enum().Values().Len() - 1).Number())
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			return protoreflect.ValueOfInt32(7)
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			return protoreflect.ValueOfInt64(7)
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			return protoreflect.ValueOfUint32(7)
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return protoreflect.ValueOfUint64(7)
		case protoreflect.FloatKind:
			return protoreflect.ValueOfFloat32(7)
		case protoreflect.DoubleKind:
			return protoreflect.ValueOfFloat64(7)
		case protoreflect.StringKind:
			return protoreflect.ValueOfString("x")
		case protoreflect.BytesKind:
			return protoreflect.ValueOfBytes([]byte("x"))
		}
		t.Fatalf("field %s: kind %v not handled", fd.FullName(), fd.Kind())
		return protoreflect.Value{}
	}
	filled := func(md protoreflect.MessageDescriptor, v protoreflect.Message) protoreflect.Message {
		if md.Fields().Len() > 0 {
			nonDefault(t, v, md.Fields().Get(0))
		}
		return v
	}
	switch {
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		val := fd.MapValue()
		var v protoreflect.Value
		if val.Kind() == protoreflect.MessageKind {
			v = protoreflect.ValueOfMessage(filled(val.Message(), mp.NewValue().Message()))
		} else {
			v = scalar(val)
		}
		mp.Set(scalar(fd.MapKey()).MapKey(), v)
	case fd.IsList():
		l := m.Mutable(fd).List()
		if fd.Kind() == protoreflect.MessageKind {
			l.Append(protoreflect.ValueOfMessage(filled(fd.Message(), l.NewElement().Message())))
		} else {
			l.Append(scalar(fd))
		}
	case fd.Kind() == protoreflect.MessageKind:
		m.Set(fd, protoreflect.ValueOfMessage(filled(fd.Message(), m.NewField(fd).Message())))
	default:
		m.Set(fd, scalar(fd))
	}
}

// TestResultKeyCoversEveryField walks CheckRescaleRequest with protoreflect: every field is
// either part of the result key (each plan and options field, set alone, gives a key of its own)
// or makes the request unmemoizable, or is the source the key's identity comes from. A field
// added to the request, the plan or the options must be classified here; the plan's and the
// options' fields then enter the key by themselves (their whole encoding is the key).
func TestResultKeyCoversEveryField(t *testing.T) {
	const (
		inKey    = "in the key"
		identity = "the source: its CacheKey and label are the key's identity"
		notMemo  = "not memoized"
	)
	top := map[protoreflect.Name]string{"checkpoint": identity, "plan": inKey, "options": inKey, "job": notMemo}
	source := map[protoreflect.Name]string{"uri": identity, "metadata": notMemo, "latest": notMemo}
	check := func(md protoreflect.MessageDescriptor, table map[protoreflect.Name]string) {
		for i := 0; i < md.Fields().Len(); i++ {
			if fd := md.Fields().Get(i); table[fd.Name()] == "" {
				t.Errorf("%s is not classified for the result cache (memo.go): is it part of the question?", fd.FullName())
			}
		}
	}
	req := &pb.CheckRescaleRequest{}
	check(req.ProtoReflect().Descriptor(), top)
	check((&pb.CheckpointSource{}).ProtoReflect().Descriptor(), source)

	// Not memoizable: a job, latest, inline bytes, no URI.
	uri := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "/ckpt"}}
	for name, r := range map[string]*pb.CheckRescaleRequest{
		"job":      {Checkpoint: uri, Job: &pb.FlinkJob{}},
		"latest":   {Checkpoint: &pb.CheckpointSource{Source: uri.Source, Latest: true}},
		"metadata": {Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: []byte("x")}}},
		"none":     {},
	} {
		if memoizable(r) {
			t.Errorf("%s: memoizable", name)
		}
	}
	if !memoizable(&pb.CheckRescaleRequest{Checkpoint: uri}) {
		t.Error("a URI request is not memoizable")
	}

	// Every plan and options field, set alone (and nested fields through their first field),
	// changes the key; no two give the same key.
	base := resultKey(t, "file:///c/_metadata|10|1", "/c/_metadata", nil, nil)
	seen := map[string]string{base: "nothing set"}
	for _, parent := range []proto.Message{&pb.RescalePlan{}, &pb.CheckOptions{}} {
		md := parent.ProtoReflect().Descriptor()
		for i := 0; i < md.Fields().Len(); i++ {
			fd := md.Fields().Get(i)
			m := parent.ProtoReflect().New()
			nonDefault(t, m, fd)
			var k string
			switch x := m.Interface().(type) {
			case *pb.RescalePlan:
				k = resultKey(t, "file:///c/_metadata|10|1", "/c/_metadata", x, nil)
			case *pb.CheckOptions:
				k = resultKey(t, "file:///c/_metadata|10|1", "/c/_metadata", nil, x)
			}
			if prev, dup := seen[k]; dup {
				t.Errorf("%s gives the same key as %s", fd.FullName(), prev)
			}
			seen[k] = string(fd.FullName())
		}
	}
	if len(seen) < 2+7 {
		t.Errorf("only %d distinct keys", len(seen))
	}

	// The identity: another version (size, mtime or ETag) or label is another key.
	for _, k := range []string{
		resultKey(t, "file:///c/_metadata|11|1", "/c/_metadata", nil, nil),
		resultKey(t, "file:///c/_metadata|10|2", "/c/_metadata", nil, nil),
		resultKey(t, "file:///c/_metadata|10|1", "file:///c/_metadata", nil, nil),
		// Length prefixes: moving bytes between the parts is another key.
		resultKey(t, "file:///c/_metadata|10|1/", "c/_metadata", nil, nil),
	} {
		if k == base {
			t.Errorf("key %q equals the base key", k)
		}
	}

	// Equal questions written alike share a key: unset and empty messages, map order.
	plan := func(kv ...any) *pb.RescalePlan {
		p := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
		for i := 0; i < len(kv); i += 2 {
			p.VertexParallelism[kv[i].(string)] = int32(kv[i+1].(int))
		}
		return p
	}
	for name, pair := range map[string][2]string{
		"empty plan and options": {base, resultKey(t, "file:///c/_metadata|10|1", "/c/_metadata", &pb.RescalePlan{}, &pb.CheckOptions{})},
		"map order": {
			resultKey(t, "k", "l", plan("a", 1, "b", 2, "c", 3, "d", 4), nil),
			resultKey(t, "k", "l", plan("d", 4, "c", 3, "b", 2, "a", 1), nil),
		},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: keys differ", name)
		}
	}
	// The options that change an answer give different keys (each alone is covered above; the
	// values here are the realistic ones).
	opts := []*pb.CheckOptions{
		{FlinkVersion: "1.18.1"}, {FlinkVersion: "1.20.0"}, {IncludeSubtasks: true}, {FailLevel: pb.Severity_SEVERITY_WARNING},
		{FailLevel: pb.Severity_SEVERITY_ERROR}, {AllowNonRestoredState: true}, {RpcFrameSizeBytes: 10 << 20},
		{InlineStateThresholdBytes: 20 << 10}, {JobmanagerMemoryBytes: 1 << 30},
	}
	keys := map[string]int{}
	for i, o := range opts {
		keys[resultKey(t, "k", "l", plan("a", 2), o)] = i
	}
	if len(keys) != len(opts) {
		t.Errorf("%d options gave %d keys", len(opts), len(keys))
	}
}

// rawCodec receives a response's bytes as they arrived on the wire.
type rawCodec struct{}

type rawBytes struct{ b []byte }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := proto.Marshal(v.(proto.Message))
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	v.(*rawBytes).b = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

func memoHarness(t *testing.T, cfg Config) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	meta := filepath.Join(dir, "_metadata")
	if err := os.WriteFile(meta, readFile(t, filepath.Join(testdataDir(t), "compact-sink", "_metadata")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Allow = []string{dir}
	return startInProcess(t, cfg), meta
}

func planReq(uri string, compactOperator int32) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": compactOperator}}}
}

func resultCounts(h *harness) (hits, misses float64) {
	return testutil.ToFloat64(h.s.metrics.results.WithLabelValues("hit")), testutil.ToFloat64(h.s.metrics.results.WithLabelValues("miss"))
}

func TestMemoHitReturnsIdenticalBytes(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{})
	conn := h.c.Conn()
	call := func(req *pb.CheckRescaleRequest) []byte {
		var out rawBytes
		if err := conn.Invoke(context.Background(), "/preflight.v1.PreflightService/CheckRescale", req, &out, grpc.ForceCodecV2(rawCodec{})); err != nil {
			t.Fatal(err)
		}
		return out.b
	}
	for _, p := range []int32{8, 4} { // DENY and ALLOW
		req := planReq(meta, p)
		miss, hit1, hit2 := call(req), call(req), call(req)
		if !bytes.Equal(hit1, hit2) {
			t.Errorf("compact-operator=%d: two hits differ", p)
		}
		var a, b pb.CheckRescaleResponse
		if err := proto.Unmarshal(miss, &a); err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(hit1, &b); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&a, &b) || a.GetReport().GetVerdict() == pb.Verdict_VERDICT_UNSPECIFIED {
			t.Errorf("compact-operator=%d: hit %v, miss %v", p, b.GetReport().GetVerdict(), a.GetReport().GetVerdict())
		}
	}
	if hits, misses := resultCounts(h); hits != 4 || misses != 2 {
		t.Errorf("hits %v misses %v, want 4 and 2", hits, misses)
	}
	if n := h.s.cache.resultLen(); n != 2 {
		t.Errorf("%d cached results, want 2", n)
	}
	// Verdicts are counted for hits too, and the log says where the answer came from.
	if n := testutil.ToFloat64(h.s.metrics.verdicts.WithLabelValues("VERDICT_DENY")); n != 3 {
		t.Errorf("DENY verdicts counted %v, want 3", n)
	}
	if !bytes.Contains([]byte(h.logs.String()), []byte(`"result_cache":"hit"`)) {
		t.Error("no result_cache=hit in the log")
	}
	// The JSON API answers the same question from the same cached message.
	body := `{"checkpoint":{"uri":"` + meta + `"},"plan":{"parallelism":{"compact-operator":8}}}`
	var bodies []string
	for range 2 {
		rec := httptest.NewRecorder()
		h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/check", strings.NewReader(body)))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "VERDICT_DENY") {
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
		bodies = append(bodies, rec.Body.String())
	}
	if bodies[0] != bodies[1] {
		t.Errorf("two JSON answers differ:\n%s\n%s", bodies[0], bodies[1])
	}
	// Counted in the cache's bytes, and so in the memory budget's evictable part.
	if _, results := h.s.cache.sizes(); results <= 0 || testutil.ToFloat64(h.s.metrics.resultCacheBytes) != float64(results) {
		t.Errorf("result bytes %d, gauge %v", results, testutil.ToFloat64(h.s.metrics.resultCacheBytes))
	}
}

// A new version of the file (new size, or only a new mtime) is never answered from the old one
// once RevalidateInterval has passed; within it the previous answer may stand (the bound).
func TestMemoInvalidatedByFileChange(t *testing.T) {
	noLeaks(t)
	const interval = 100 * time.Millisecond
	h, meta := memoHarness(t, Config{RevalidateInterval: interval})
	td := testdataDir(t)
	ctx := context.Background()
	req := planReq(meta, 8)
	first, err := h.c.Check(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	size := first.GetCheckpoint().GetSizeBytes()

	// Same name, other content and size.
	other := readFile(t, filepath.Join(td, "max-parallelism", "_metadata"))
	if int64(len(other)) == size {
		t.Fatal("the replacement must differ in size")
	}
	tmp := meta + ".new"
	os.WriteFile(tmp, other, 0o644)
	if err := os.Rename(tmp, meta); err != nil {
		t.Fatal(err)
	}
	time.Sleep(interval) // the interval since the last check of the source has passed
	got, err := h.c.Check(ctx, req)
	if err != nil && status.Code(err) != codes.InvalidArgument { // the plan may not fit the new file
		t.Fatal(err)
	}
	if err == nil && got.GetCheckpoint().GetSizeBytes() != int64(len(other)) {
		t.Errorf("after a rewrite: report of %d bytes, want the new file's %d", got.GetCheckpoint().GetSizeBytes(), len(other))
	}
	any := &pb.CheckRescaleRequest{Checkpoint: req.Checkpoint}
	got, err = h.c.Check(ctx, any)
	if err != nil || got.GetCheckpoint().GetSizeBytes() != int64(len(other)) {
		t.Fatalf("new file: %v, %d bytes", err, got.GetCheckpoint().GetSizeBytes())
	}

	// Same content, only the mtime changes: another version, so a miss.
	_, misses := resultCounts(h)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(meta, later, later); err != nil {
		t.Fatal(err)
	}
	time.Sleep(interval)
	if _, err := h.c.Check(ctx, any); err != nil {
		t.Fatal(err)
	}
	if _, m := resultCounts(h); m != misses+1 {
		t.Errorf("after a new mtime: misses %v, want %v", m, misses+1)
	}
	// Within the interval the same version is trusted: a hit, no new open.
	hits, _ := resultCounts(h)
	if _, err := h.c.Check(ctx, any); err != nil {
		t.Fatal(err)
	}
	if hh, _ := resultCounts(h); hh != hits+1 {
		t.Errorf("hits %v, want %v", hh, hits+1)
	}
}

// With RevalidateInterval negative every request asks the source: a rewrite is seen at once.
func TestMemoRevalidateEveryRequest(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{RevalidateInterval: -1})
	ctx := context.Background()
	req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: meta}}}
	if _, err := h.c.Check(ctx, req); err != nil {
		t.Fatal(err)
	}
	other := readFile(t, filepath.Join(testdataDir(t), "kafka-orphan-union", "_metadata"))
	os.WriteFile(meta, other, 0o644)
	got, err := h.c.Check(ctx, req)
	if err != nil || got.GetCheckpoint().GetSizeBytes() != int64(len(other)) {
		t.Fatalf("%v, %d bytes, want %d", err, got.GetCheckpoint().GetSizeBytes(), len(other))
	}
	os.Remove(meta)
	if _, err := h.c.Check(ctx, req); status.Code(err) != codes.NotFound {
		t.Errorf("removed file: %v, want NotFound", err)
	}
}

func TestResultCacheEvictsByBytes(t *testing.T) {
	c := newLayoutCache(2, 10_000)
	c.maxResultBytes = 1000
	var evicted []*memoResult
	c.onEvictResult = func(r *memoResult) { evicted = append(evicted, r) }
	c.put("layout", cacheValue{bytes: 500}, 1<<30)
	rs := make([]*memoResult, 4)
	for i := range rs {
		rs[i] = &memoResult{}
		if !c.putResult(fmt.Sprint("r", i), rs[i], 400, 1<<30) {
			t.Fatalf("result %d not kept", i)
		}
	}
	if _, results := c.sizes(); results != 800 || c.resultLen() != 2 {
		t.Errorf("results hold %d bytes in %d entries, want 800 in 2", results, c.resultLen())
	}
	if len(evicted) != 2 || evicted[0] != rs[0] || evicted[1] != rs[1] {
		t.Errorf("evicted %v, want the two oldest", evicted)
	}
	if _, ok := c.get("layout"); !ok {
		t.Error("the results' own bound evicted a layout")
	}
	if c.putResult("huge", &memoResult{}, 1001, 1<<30) {
		t.Error("a result larger than maxResultBytes was kept")
	}
	// Memory pressure (admission's shrinkTo) evicts the least recently used across both kinds:
	// here the results are older than the layout just read.
	c.get("layout")
	c.shrinkTo(600)
	if _, ok := c.get("layout"); !ok || c.resultLen() != 0 || c.size() != 500 {
		t.Errorf("after shrinkTo(600): layout kept %v, %d results, %d bytes", ok, c.resultLen(), c.size())
	}
	// Layouts' entry bound does not count results.
	c.putResult("r", &memoResult{}, 100, 1<<30)
	c.put("layout2", cacheValue{bytes: 100}, 1<<30)
	if c.resultLen() != 1 || c.len() != 2 {
		t.Errorf("%d results, %d layouts", c.resultLen(), c.len())
	}
	// No room in the budget: not kept.
	if c.putResult("r2", &memoResult{}, 100, 50) {
		t.Error("kept beyond the room the budget leaves")
	}
}

// A request for the whole memory budget evicts cached answers as it does layouts.
func TestResultCacheGivesWayToRequests(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{MemoryBudget: 64 << 20})
	if _, err := h.c.Check(context.Background(), planReq(meta, 8)); err != nil {
		t.Fatal(err)
	}
	if h.s.cache.resultLen() != 1 {
		t.Fatal("not cached")
	}
	g, err := h.s.adm.acquire(context.Background(), false, 64<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.release()
	if n, b := h.s.cache.resultLen(), h.s.cache.size(); n != 0 || b != 0 {
		t.Errorf("%d results, %d bytes cached beside a request of the whole budget", n, b)
	}
	if _, ok := h.s.encoded.Load(&pb.CheckRescaleResponse{}); ok {
		t.Error("encoded bytes kept for an unknown response")
	}
	n := 0
	h.s.encoded.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d encoded answers kept after eviction", n)
	}
}

// Concurrent callers asking ALLOW and DENY questions, with the answers cached, in flight and
// evicted under a tiny result budget, all get the sequential reference answer (run with -race).
func TestMemoConcurrent(t *testing.T) {
	noLeaks(t)
	for _, resultBytes := range []int64{0, 40 << 10} { // default, and small enough to evict
		t.Run(fmt.Sprint(resultBytes), func(t *testing.T) {
			h, meta := memoHarness(t, Config{ResultCacheBytes: resultBytes, QueueWait: time.Minute})
			plans := []int32{1, 2, 3, 4, 6, 8}
			ref := map[int32]outcome{}
			for _, p := range plans {
				ref[p] = newOutcome(h.c.Check(context.Background(), planReq(meta, p)))
			}
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for w := range 16 {
				wg.Go(func() {
					for i := range 30 {
						p := plans[(w+i)%len(plans)]
						if got := newOutcome(h.c.Check(context.Background(), planReq(meta, p))); !got.equal(ref[p]) {
							errs <- fmt.Errorf("compact-operator=%d: %s, want %s", p, got, ref[p])
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if hits, _ := resultCounts(h); hits == 0 {
				t.Error("no hits")
			}
		})
	}
}

// A miss still honours the caller's cancellation and deadline, and what fails is not cached.
func TestMemoMissHonoursContext(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{})
	req := planReq(meta, 8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.s.svc.CheckRescale(ctx, req); status.Code(err) != codes.Canceled {
		t.Errorf("cancelled miss: %v", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	if _, err := h.s.svc.CheckRescale(dctx, req); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("expired miss: %v", err)
	}
	if n := h.s.cache.resultLen(); n != 0 {
		t.Errorf("%d results cached from failed requests", n)
	}
	// The layout is cached and the source trusted now; a cancelled miss still fails.
	if _, err := h.s.svc.CheckRescale(context.Background(), planReq(meta, 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.svc.CheckRescale(ctx, req); status.Code(err) != codes.Canceled {
		t.Errorf("cancelled miss on a cached layout: %v", err)
	}
	if got, err := h.c.Check(context.Background(), req); err != nil || got.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Errorf("after the failures: %v %v", got.GetVerdict(), err)
	}
}

// TestMemoBytesCoversTheMessage measures the heap a report the engine built keeps alive (what the
// result cache holds besides the wire bytes) and checks that memoBytes counts at least that.
func TestMemoBytesCoversTheMessage(t *testing.T) {
	eng := engine.New()
	for _, sc := range checkScenarios(t) {
		l := checkpointtest.File(t, sc.path)
		const n = 100
		keep := make([]*pb.CheckRescaleResponse, 0, n)
		var before, after runtime.MemStats
		runtime.GC() // twice: the second also empties the sync.Pools' victim caches
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range n {
			rep, err := eng.Check(context.Background(), engine.Request{Layout: l, Source: sc.path, Plan: sc.plan, Options: sc.opts})
			var pe *engine.PlanError
			if errors.As(err, &pe) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			keep = append(keep, &pb.CheckRescaleResponse{Report: rep})
		}
		if len(keep) == 0 {
			continue
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		raw, _ := proto.Marshal(keep[0])
		perMessage := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(len(keep))
		counted := memoBytes("", raw) - int64(len(raw)) - memoOverheadBytes/2
		t.Logf("%s: %d wire bytes, %d heap bytes per message, counted %d", sc.name, len(raw), perMessage, counted)
		if perMessage > counted {
			t.Errorf("%s: a message keeps %d bytes, memoBytes counts %d", sc.name, perMessage, counted)
		}
		runtime.KeepAlive(keep)
	}
}
