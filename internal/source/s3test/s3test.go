// Package s3test runs a real S3 server (versitygw, Apache-2.0) on 127.0.0.1 for tests, so that the
// object-store path is tested against the protocol rather than a fake. It only starts, fills and
// stops the gateway; it knows nothing about checkpoints.
//
// The binary is found through $VERSITYGW, then PATH, then $(go env GOPATH)/bin. When absent,
// tests skip with the install command, except under CI=true where absence is a failure.
package s3test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// Install is the command that provides the binary.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Credentials of the gateway's root account. Tests export them as AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY so that gocloud's s3blob picks them up.
const (
	AccessKey = "preflight-test"
	SecretKey = "preflight-test-secret"
)

// Gateway is a running versitygw.
type Gateway struct {
	Addr string // 127.0.0.1:port
	Dir  string // the posix root; buckets are its folders
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary returns the versitygw path, or "" when not installed.
func Binary() string {
	if p := os.Getenv("VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(dir, "bin", "versitygw")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// Require returns the binary, skipping the test when it is absent (failing under CI=true).
func Require(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "versitygw not found ($VERSITYGW, PATH, GOPATH/bin); install it with: " + Install
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// Start runs a gateway for the test and sets the AWS credential variables (so the test must not
// be parallel). It is stopped at cleanup.
func Start(t testing.TB) *Gateway {
	t.Helper()
	bin := Require(t)
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	// Keep the SDK away from the machine's own config and IMDS.
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	g := &Gateway{Addr: freeAddr(t), Dir: t.TempDir(), done: make(chan struct{})}
	g.cmd = exec.Command(bin, "--port", g.Addr, "posix", g.Dir)
	g.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	logf, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); logf.Close(); close(g.done) }()
	t.Cleanup(g.Stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", g.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-g.done:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("versitygw exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s", g.Addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return g
}

// Stop kills the gateway (idempotent), so tests can see an unreachable store.
func (g *Gateway) Stop() {
	if g.cmd.Process != nil {
		g.cmd.Process.Kill()
		<-g.done
	}
}

// Endpoint is the gateway's URL.
func (g *Gateway) Endpoint() string { return "http://" + g.Addr }

// BucketURL is the gocloud URL of a bucket on this gateway.
func (g *Gateway) BucketURL(bucket string) string {
	q := url.Values{}
	q.Set("endpoint", g.Endpoint())
	q.Set("use_path_style", "true")
	q.Set("disable_https", "true")
	q.Set("region", "us-east-1")
	return "s3://" + bucket + "?" + q.Encode()
}

func (g *Gateway) client() *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(g.Endpoint()),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
}

// CreateBucket creates a bucket.
func (g *Gateway) CreateBucket(t testing.TB, bucket string) {
	t.Helper()
	if _, err := g.client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
}

// Put stores an object of the given size from r.
func (g *Gateway) Put(t testing.TB, bucket, key string, r io.ReadSeeker) {
	t.Helper()
	_, err := g.client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: r})
	if err != nil {
		t.Fatalf("put s3://%s/%s: %v", bucket, key, err)
	}
}

// PutFolder uploads every file of the local folder dir (not its sub-folders) under prefix
// ("savepoints/sp-1/"), 32 at a time.
func (g *Gateway) PutFolder(t testing.TB, bucket, prefix, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := g.client()
	var eg errgroup.Group
	eg.SetLimit(32)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		eg.Go(func() error {
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix + e.Name()), Body: f})
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		t.Fatalf("upload %s to s3://%s/%s: %v", dir, bucket, prefix, err)
	}
}

// Delete removes an object.
func (g *Gateway) Delete(t testing.TB, bucket, key string) {
	t.Helper()
	if _, err := g.client().DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete s3://%s/%s: %v", bucket, key, err)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// String describes the gateway for logs.
func (g *Gateway) String() string { return fmt.Sprintf("versitygw at %s (root %s)", g.Addr, g.Dir) }
