package server

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// tempFiles gives write, which writes a file of that name and content into a fresh temporary
// folder and returns its path, and the path of a file that does not exist there.
func tempFiles(t *testing.T) (write func(name, content string) string, missing string) {
	t.Helper()
	dir := t.TempDir()
	write = func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write, filepath.Join(dir, "missing")
}

func TestContainerMemoryLimit(t *testing.T) {
	write, missing := tempFiles(t)
	meminfo := write("meminfo", "MemTotal:       8000000 kB\nMemFree: 1 kB\n")
	for _, tc := range []struct {
		name       string
		v2, v1     string
		wantLimit  int64
		wantBudget int64
	}{
		{"cgroup v2 limit", write("v2", "1073741824\n"), missing, 1 << 30, 3 << 28},
		{"cgroup v2 max", write("v2max", "max\n"), missing, 0, 8000000 << 10 / 2},
		{"cgroup v1 limit", missing, write("v1", "536870912\n"), 512 << 20, 384 << 20},
		{"cgroup v1 unlimited", missing, write("v1max", "9223372036854771712\n"), 0, 8000000 << 10 / 2},
		{"no cgroups", missing, missing, 0, 8000000 << 10 / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(a, b, c string) { cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = a, b, c }(cgroupV2MemoryMax, cgroupV1Limit, procMeminfo)
			cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = tc.v2, tc.v1, meminfo
			if got, _ := ContainerMemoryLimit(); got != tc.wantLimit {
				t.Errorf("limit %d, want %d", got, tc.wantLimit)
			}
			if got := DefaultMemoryBudget(); got != tc.wantBudget {
				t.Errorf("budget %d, want %d", got, tc.wantBudget)
			}
		})
	}
}

// TestMinRateBody: a body delivered above the minimum rate is read whole however long it takes;
// one that trickles below it is cut.
func TestMinRateBody(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, minRateBody(w, r, 100, 300*time.Millisecond))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		io.WriteString(w, "read "+strconv.FormatInt(n, 10))
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	send := func(chunk int, every time.Duration, chunks int) (string, time.Duration) {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: "+strconv.FormatInt(int64(chunk*chunks), 10)+"\r\n\r\n")
		for range chunks {
			if _, err := c.Write([]byte(strings.Repeat("a", chunk))); err != nil {
				break
			}
			time.Sleep(every)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		return string(b), time.Since(start)
	}
	// 200 bytes every 100 ms for 1.5 s: steady, above 100 bytes per 300 ms.
	if resp, _ := send(200, 100*time.Millisecond, 15); !strings.Contains(resp, "read 3000") {
		t.Errorf("steady body: %q", resp)
	}
	// 1 byte every 100 ms: below the rate, cut within about one window.
	if resp, took := send(1, 100*time.Millisecond, 50); !strings.Contains(resp, "408") || took > 4*time.Second {
		t.Errorf("trickled body: after %v %q", took, resp)
	}
}

// TestWriteIdle: behind withWriteIdle, a response written slowly to a client that reads it goes
// through however long it takes (the deadline moves with each write), and one to a client that
// reads nothing fails within the idle time once the connection's buffers are full.
func TestWriteIdle(t *testing.T) {
	const idle = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		reads   bool
		pause   time.Duration // between writes
		write   int           // bytes a write
		wantErr bool
	}{
		{"read slowly", true, 20 * time.Millisecond, 64 << 10, false},
		// A report's JSON goes in one write, whose whole time may exceed the idle time.
		{"one large write read slowly", true, 0, 16 << 20, false},
		{"not read", false, 0, 64 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chunk := make([]byte, tc.write)
			chunks := 25 // 0.5 s with pauses: longer than idle
			switch {
			case !tc.reads:
				chunks = 4096 // 256 MiB: more than any socket buffers
			case tc.pause == 0:
				chunks = 1
			}
			done := make(chan error, 1)
			srv := &http.Server{Handler: withWriteIdle(idle, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var err error
				for i := 0; i < chunks && err == nil; i++ {
					if _, err = w.Write(chunk); err == nil {
						err = http.NewResponseController(w).Flush()
					}
					time.Sleep(tc.pause)
				}
				done <- err
			}))}
			addr := testutil.ServeLoopback(t, srv.Serve, func() { srv.Close() })
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if !tc.reads {
				// Full sooner. (Not for a reader: a window this small stalls loopback TCP for
				// its persist timer, 200 ms.)
				conn.(*net.TCPConn).SetReadBuffer(4 << 10)
			}
			io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if tc.reads {
				go func() {
					// 256 KiB every 10 ms: 16 MiB take 0.6 s. (Less at a time stalls loopback TCP, whose
					// segments are 64 KiB, for its persist timer.)
					b := make([]byte, 256<<10)
					for {
						if _, err := io.ReadFull(conn, b); err != nil {
							return
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			select {
			case err := <-done:
				if (err != nil) != tc.wantErr {
					t.Errorf("the handler's writes ended with %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the handler's writes still blocked after 20 s")
			}
		})
	}
}
