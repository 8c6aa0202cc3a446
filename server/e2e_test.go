package server

// End-to-end tests: the real preflightd binary on 127.0.0.1 with port 0, reached the ways callers
// reach it (the Go client, gRPC reflection with no compiled-in descriptors, HTTP/JSON, streaming
// upload), plus real S3 (versitygw), TLS, draining on SIGTERM and, opt-in, the 168 MB file.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

var (
	binDir    string // removed after the run
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "preflightd-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// daemonBinary builds preflightd once per run, on first use, so that in-process tests alone do
// not pay for the build.
func daemonBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test builds and runs preflightd; skipped with -short")
	}
	// go build reads the daemon's main package and the packages only it links: the test cache must
	// see them.
	testutil.DependOn(t, "preflightd", "../internal/flagconfig")
	buildOnce.Do(func() {
		binPath = filepath.Join(binDir, "preflightd")
		// No VCS stamping: the test must not depend on the checkout's git state.
		args := []string{"build", "-buildvcs=false", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race") // the daemon under test gets the race detector too
		}
		out, err := exec.Command("go", append(args, "./preflightd")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./preflightd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// daemon is a running preflightd, stopped when the test ends.
type daemon struct{ *testutil.Daemon }

func startDaemon(t testing.TB, args ...string) *daemon {
	t.Helper()
	d, err := testutil.StartDaemon(daemonBinary(t), nil, append([]string{"--grpc-addr=127.0.0.1:0", "--http-addr=127.0.0.1:0", "--log-level=debug"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Stop()
		if t.Failed() {
			t.Logf("preflightd %v log:\n%s", args, d.Stderr.String())
		}
	})
	return &daemon{d}
}

func (d *daemon) client(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), d.GRPCAddr, client.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (d *daemon) postJSON(t testing.TB, path string, msg proto.Message) (int, []byte) {
	t.Helper()
	body, err := protojson.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return post(t, "http://"+d.HTTPAddr+path, body)
}

// reflectionCaller calls CheckRescale the way grpcurl does: descriptors come from the server's
// reflection service and messages are dynamicpb, so nothing compiled in is used on the wire.
type reflectionCaller struct {
	conn   *grpc.ClientConn
	method protoreflect.MethodDescriptor
	types  *dynamicpb.Types
}

func newReflectionCaller(t testing.TB, addr string) *reflectionCaller {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(req *reflectionpb.ServerReflectionRequest) *reflectionpb.ServerReflectionResponse {
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	const svc = "preflight.v1.PreflightService"
	var listed bool
	for _, s := range ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}).GetListServicesResponse().GetService() {
		listed = listed || s.GetName() == svc
	}
	if !listed {
		t.Fatalf("reflection does not list %s", svc)
	}
	resp := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc}})
	set := &descriptorpb.FileDescriptorSet{}
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fd); err != nil {
			t.Fatal(err)
		}
		set.File = append(set.File, fd)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(svc)
	if err != nil {
		t.Fatal(err)
	}
	return &reflectionCaller{conn: conn, method: d.(protoreflect.ServiceDescriptor).Methods().ByName("CheckRescale"), types: dynamicpb.NewTypes(files)}
}

func (r *reflectionCaller) check(t testing.TB, req *pb.CheckRescaleRequest) (*pb.RescaleReport, error) {
	t.Helper()
	js, err := protojson.Marshal(req) // the JSON a user would type into grpcurl
	if err != nil {
		t.Fatal(err)
	}
	in := dynamicpb.NewMessage(r.method.Input())
	if err := (protojson.UnmarshalOptions{Resolver: r.types}).Unmarshal(js, in); err != nil {
		t.Fatal(err)
	}
	out := dynamicpb.NewMessage(r.method.Output())
	full := "/" + string(r.method.Parent().FullName()) + "/" + string(r.method.Name())
	if err := r.conn.Invoke(context.Background(), full, in, out); err != nil {
		return nil, err
	}
	// Compiled types only to compare with the other paths.
	b, err := proto.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var resp pb.CheckRescaleResponse
	if err := proto.Unmarshal(b, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.GetReport(), nil
}

func uriRequest(sc scenario, uri string) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}}, Plan: sc.plan, Options: sc.opts}
}

// TestE2ESameAnswerEveryPath is the product's promise: one checkpoint and plan, one answer,
// whichever way the caller asks.
func TestE2ESameAnswerEveryPath(t *testing.T) {
	td := testdataDir(t)
	args := []string{"--allow=" + td}
	if d := corpusDir(); d != "" {
		args = append(args, "--allow="+d)
	}
	d := startDaemon(t, args...)
	c := d.client(t)
	refl := newReflectionCaller(t, d.GRPCAddr)
	ctx := context.Background()
	for _, sc := range checkScenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			goClient := newOutcome(c.Check(ctx, uriRequest(sc, sc.path)))
			reflection := newOutcome(refl.check(t, uriRequest(sc, sc.path)))
			code, body := d.postJSON(t, "/v1/check", uriRequest(sc, sc.path))
			viaHTTP := newOutcome(decodeHTTP(t, code, body))
			upload := newOutcome(c.CheckFile(ctx, sc.path, sc.plan, sc.opts, nil))
			for name, o := range map[string]outcome{"reflection": reflection, "http": viaHTTP, "upload": upload} {
				if !o.equal(goClient) {
					t.Errorf("%s differs from the Go client:\n%s\nvs\n%s", name, o, goClient)
				}
			}
			if goClient.code != "OK" && strings.HasPrefix(sc.name, "compact-sink") {
				t.Errorf("example checkpoint failed: %s", goClient)
			}
			t.Logf("%s", goClient.brief())
		})
	}
	// The headline demo of the README (testdata/README.md).
	rep, err := c.Check(ctx, uriRequest(checkScenarios(t)[0], filepath.Join(td, "compact-sink")))
	if err != nil || rep.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Errorf("compact-operator=8: %v %v, want DENY", rep.GetVerdict(), err)
	}
	// Inspect through gRPC and HTTP agrees too.
	ireq := &pb.InspectCheckpointRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(td, "compact-sink")}}}
	ig, err := c.Inspect(ctx, ireq)
	if err != nil {
		t.Fatal(err)
	}
	code, body := d.postJSON(t, "/v1/inspect", ireq)
	var ih pb.InspectCheckpointResponse
	if code != 200 || protojson.Unmarshal(body, &ih) != nil || !proto.Equal(ig, &ih) || len(ig.GetOperators()) == 0 {
		t.Errorf("inspect: HTTP %d %s vs gRPC %v", code, body, ig)
	}
}

// TestE2EErrors checks the codes callers branch on, over gRPC and HTTP.
func TestE2EErrors(t *testing.T) {
	td := testdataDir(t)
	bad := t.TempDir()
	good := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	os.WriteFile(filepath.Join(bad, "_metadata"), good[:len(good)/2], 0o644)
	d := startDaemon(t, "--allow="+td, "--allow="+bad, "--max-upload-bytes=65536")
	c := d.client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		uri  string
		code codes.Code
		http int
	}{
		{"malformed", bad, codes.InvalidArgument, http.StatusBadRequest},
		{"missing", filepath.Join(td, "missing-checkpoint"), codes.NotFound, http.StatusNotFound},
		{"outside the allowlist", "file:///etc/passwd", codes.PermissionDenied, http.StatusForbidden},
		{"dot-dot escape", td + "/../go.mod", codes.PermissionDenied, http.StatusForbidden},
		{"over the size limit", filepath.Join(td, "kafka-orphan-union"), codes.ResourceExhausted, http.StatusTooManyRequests},
		{"bad scheme", "ftp://host/_metadata", codes.InvalidArgument, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: tc.uri}}}
			_, err := c.Check(ctx, req)
			if status.Code(err) != tc.code {
				t.Fatalf("gRPC: %v, want %v", err, tc.code)
			}
			code, body := d.postJSON(t, "/v1/check", req)
			if code != tc.http {
				t.Errorf("HTTP %d %s, want %d", code, body, tc.http)
			}
			if tc.code == codes.InvalidArgument && tc.name == "malformed" {
				fe := formatDetail(t, err)
				if fe.GetOffset() <= 0 || fe.GetField() == "" {
					t.Errorf("detail %v lacks offset or field", fe)
				}
				// The HTTP error carries the same detail, typed.
				var st struct {
					Details []struct {
						Type   string `json:"@type"`
						Offset string `json:"offset"`
						Field  string `json:"field"`
					} `json:"details"`
				}
				json.Unmarshal(body, &st)
				if len(st.Details) != 1 || st.Details[0].Type != "type.googleapis.com/preflight.v1.MetadataFormatError" ||
					st.Details[0].Offset != strconv.FormatInt(fe.GetOffset(), 10) || st.Details[0].Field != fe.GetField() {
					t.Errorf("HTTP detail %s, want offset %d field %q", body, fe.GetOffset(), fe.GetField())
				}
			}
		})
	}
	t.Run("upload over the size limit", func(t *testing.T) {
		f, err := os.Open(filepath.Join(td, "kafka-orphan-union", "_metadata"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := c.Upload(ctx, f, &pb.UploadHeader{}); status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("err = %v, want ResourceExhausted", err)
		}
	})
	t.Run("malformed upload", func(t *testing.T) {
		_, err := c.CheckFile(ctx, bad, nil, nil, nil)
		if fe := formatDetail(t, err); fe.GetOffset() <= 0 || fe.GetField() == "" {
			t.Errorf("detail %v", fe)
		}
	})
}

// TestE2ES3 reads checkpoints from a real S3 server.
func TestE2ES3(t *testing.T) {
	td := testdataDir(t)
	g := s3test.Start(t) // exports the AWS credentials the daemon inherits
	g.CreateBucket(t, "ckpts")
	body := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	g.Put(t, "ckpts", "flink/job-1/chk-42/_metadata", bytes.NewReader(body))
	// A short revalidation interval: the outage below must surface once it has passed.
	d := startDaemon(t, "--allow="+strings.Replace(g.BucketURL("ckpts"), "?", "/flink?", 1), "--revalidate-interval=200ms")
	c := d.client(t)
	ctx := context.Background()
	sc := checkScenarios(t)[0]
	want := newOutcome(c.Upload(ctx, bytes.NewReader(body), &pb.UploadHeader{Plan: sc.plan, Options: sc.opts}))
	if want.code != "OK" {
		t.Fatalf("upload: %s", want)
	}
	for _, uri := range []string{"s3://ckpts/flink/job-1/chk-42/_metadata", "s3://ckpts/flink/job-1/chk-42"} {
		rep, err := c.Check(ctx, uriRequest(sc, uri))
		if got := newOutcome(rep, err); !got.equal(want) {
			t.Errorf("%s: %s\nwant %s", uri, got, want)
		}
		if rep.GetCheckpoint().GetSource() != "s3://ckpts/flink/job-1/chk-42/_metadata" {
			t.Errorf("source label %q", rep.GetCheckpoint().GetSource())
		}
	}
	for _, tc := range []struct {
		uri  string
		code codes.Code
	}{
		{"s3://ckpts/flink/job-1/chk-43", codes.NotFound},
		{"s3://ckpts/other/_metadata", codes.PermissionDenied},
		{"s3://ckpts/flink/job-1/chk-42?endpoint=http%3A%2F%2F169.254.169.254", codes.PermissionDenied},
	} {
		if _, err := c.Check(ctx, uriRequest(sc, tc.uri)); status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.uri, err, tc.code)
		}
	}
	g.Stop()
	// The cache hides an outage no longer than the revalidation interval: once it has passed,
	// the object cannot be stat'ed, so the answer is UNAVAILABLE with a retry hint.
	time.Sleep(300 * time.Millisecond)
	_, err := c.Check(ctx, uriRequest(sc, "s3://ckpts/flink/job-1/chk-42"))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("S3 stopped: %v, want Unavailable", err)
	}
	if len(status.Convert(err).Details()) == 0 {
		t.Error("UNAVAILABLE without RetryInfo")
	}
}

// TestE2EDrain sends SIGTERM during an upload: health turns NOT_SERVING, the upload still
// completes, and the daemon exits 0.
func TestE2EDrain(t *testing.T) {
	td := testdataDir(t)
	d := startDaemon(t, "--drain-delay=700ms", "--shutdown-timeout=20s")
	c := d.client(t)
	body := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	release := make(chan struct{})
	r := io.MultiReader(bytes.NewReader(body[:100]), gateReader{release}, bytes.NewReader(body[100:]))
	type result struct {
		rep *pb.RescaleReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := c.Upload(context.Background(), r, &pb.UploadHeader{Plan: checkScenarios(t)[0].plan})
		done <- result{rep, err}
	}()
	// The upload is in flight once the server counts it.
	waitFor(t, func() bool { return d.Metric("preflight_uploads_receiving") == 1 })
	d.Cmd.Process.Signal(syscall.SIGTERM)
	hc := healthpb.NewHealthClient(c.Conn())
	waitFor(t, func() bool {
		resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{})
		return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING
	})
	close(release)
	res := <-done
	if res.err != nil || res.rep.GetVerdict() == pb.Verdict_VERDICT_UNSPECIFIED {
		t.Fatalf("in-flight upload during drain: %v %v", res.rep, res.err)
	}
	select {
	case <-d.Done:
		if d.WaitErr != nil {
			t.Fatalf("exit: %v", d.WaitErr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("daemon did not exit after draining")
	}
}

type gateReader struct{ c chan struct{} }

func (g gateReader) Read([]byte) (int, error) { <-g.c; return 0, io.EOF }

// TestE2EMutualTLS runs the daemon with --tls-cert/--tls-key/--tls-client-ca.
func TestE2EMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCA(t, dir)
	writeLeaf(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	writeLeaf(t, dir, "client", ca, caKey, x509.ExtKeyUsageClientAuth)
	p := func(n string) string { return filepath.Join(dir, n) }
	d := startDaemon(t, "--tls-cert="+p("server.pem"), "--tls-key="+p("server-key.pem"), "--tls-client-ca="+p("ca.pem"))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts client.Options
		ok   bool
	}{
		{"mutual", client.Options{CAFile: p("ca.pem"), CertFile: p("client.pem"), KeyFile: p("client-key.pem")}, true},
		{"no client certificate", client.Options{CAFile: p("ca.pem")}, false},
		{"plaintext", client.Options{Insecure: true}, false},
		{"wrong server name", client.Options{CAFile: p("ca.pem"), CertFile: p("client.pem"), KeyFile: p("client-key.pem"), ServerName: "other.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Dial(ctx, d.GRPCAddr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := c.Health(hctx); (err == nil) != tc.ok {
				t.Fatalf("health: %v, want ok=%v", err, tc.ok)
			}
		})
	}
	t.Run("https healthz", func(t *testing.T) {
		cert, err := tls.LoadX509KeyPair(p("client.pem"), p("client-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + d.HTTPAddr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
	})
}

func writeCA(t testing.TB, dir string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "preflight test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", der)
	return ca, key
}

func writeLeaf(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", kb)
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestE2EBadFlags: configuration mistakes stop the daemon at startup with a message, rather than
// refusing every request later.
func TestE2EBadFlags(t *testing.T) {
	bin := daemonBinary(t)
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"missing allowed folder", []string{"--allow=" + filepath.Join(t.TempDir(), "missing")}, "allow"},
		{"unknown scheme", []string{"--allow=ftp://host/x"}, "unknown scheme"},
		{"client CA without a certificate", []string{"--tls-client-ca=ca.pem"}, "client CA"},
		{"unknown flag", []string{"--no-such-flag"}, "no-such-flag"},
		{"log level", []string{"--log-level=loud"}, "log-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"--grpc-addr=127.0.0.1:0", "--http-addr="}, tc.args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.msg) {
				t.Fatalf("err %v, output %q: want a failure mentioning %q", err, out, tc.msg)
			}
		})
	}
}

// TestE2EHTTPSource reads a checkpoint over http(s) when enabled, and refuses it otherwise.
func TestE2EHTTPSource(t *testing.T) {
	td := testdataDir(t)
	srv := httptest.NewServer(http.StripPrefix("/ckpt/", http.FileServer(http.Dir(td))))
	defer srv.Close()
	sc := checkScenarios(t)[0]
	ctx := context.Background()
	off := startDaemon(t, "--allow="+srv.URL+"/ckpt").client(t)
	if _, err := off.Check(ctx, uriRequest(sc, srv.URL+"/ckpt/compact-sink")); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("http sources off: %v, want PermissionDenied", err)
	}
	on := startDaemon(t, "--enable-http-sources", "--allow="+srv.URL+"/ckpt").client(t)
	want := newOutcome(on.CheckFile(ctx, filepath.Join(td, "compact-sink"), sc.plan, sc.opts, nil))
	for _, uri := range []string{srv.URL + "/ckpt/compact-sink", srv.URL + "/ckpt/compact-sink/_metadata"} {
		if got := newOutcome(on.Check(ctx, uriRequest(sc, uri))); !got.equal(want) {
			t.Errorf("%s: %s\nwant %s", uri, got, want)
		}
	}
	if _, err := on.Check(ctx, uriRequest(sc, srv.URL+"/ckpt/nope")); status.Code(err) != codes.NotFound {
		t.Errorf("missing: %v, want NotFound", err)
	}
	if _, err := on.Check(ctx, uriRequest(sc, srv.URL+"/other/_metadata")); status.Code(err) != codes.PermissionDenied {
		t.Errorf("outside: %v, want PermissionDenied", err)
	}
}
