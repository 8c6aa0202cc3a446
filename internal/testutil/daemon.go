package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Daemon is a running preflightd with the addresses it printed on stdout.
type Daemon struct {
	Cmd      *exec.Cmd
	GRPCAddr string
	HTTPAddr string // empty when the HTTP listener is off
	OpsAddr  string // empty unless started with --ops-addr
	Stderr   *SyncBuffer
	Done     chan struct{} // closed when the process has exited
	WaitErr  error         // the process's exit, once Done is closed
}

// StartDaemon starts the preflightd binary bin with args (flags in the --name=value form; env is
// added to this process's environment) and waits, 20 s at most, until it has printed the address
// of every listener the last --http-addr and --ops-addr in args turn on (the gRPC one always).
func StartDaemon(bin string, env []string, args ...string) (*Daemon, error) {
	d := &Daemon{Stderr: &SyncBuffer{}, Done: make(chan struct{})}
	d.Cmd = exec.Command(bin, args...)
	d.Cmd.Env = append(os.Environ(), env...)
	d.Cmd.Stderr = d.Stderr
	stdout, err := d.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.Cmd.Start(); err != nil {
		return nil, err
	}
	want := [3]bool{true, lastFlag(args, "--http-addr=") != "", lastFlag(args, "--ops-addr=") != ""}
	addrs := make(chan [3]string, 1)
	go func() {
		var a [3]string
		sent := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			for i, key := range [3]string{"grpc-addr=", "http-addr=", "ops-addr="} {
				if v, ok := strings.CutPrefix(sc.Text(), key); ok {
					a[i] = v
				}
			}
			if !sent && (a[0] != "" || !want[0]) && (a[1] != "" || !want[1]) && (a[2] != "" || !want[2]) {
				addrs <- a
				sent = true
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { d.WaitErr = d.Cmd.Wait(); close(d.Done) }()
	select {
	case a := <-addrs:
		d.GRPCAddr, d.HTTPAddr, d.OpsAddr = a[0], a[1], a[2]
		return d, nil
	case <-d.Done:
		return nil, fmt.Errorf("preflightd exited: %v\n%s", d.WaitErr, d.Stderr)
	case <-time.After(20 * time.Second):
		d.Stop()
		return nil, errors.New("preflightd printed no addresses in 20 s\n" + d.Stderr.String())
	}
}

// lastFlag returns the value of the last flag in args with the given prefix ("--name=").
func lastFlag(args []string, prefix string) string {
	v := ""
	for _, a := range args {
		if s, ok := strings.CutPrefix(a, prefix); ok {
			v = s
		}
	}
	return v
}

// Stop sends SIGTERM and waits for the exit, killing the process after 10 s.
func (d *Daemon) Stop() {
	d.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.Done:
	case <-time.After(10 * time.Second):
		d.Cmd.Process.Kill()
		<-d.Done
	}
}

// Metric reads a sample from the daemon's HTTP /metrics (-1 when absent or unreachable).
func (d *Daemon) Metric(name string) float64 { return Scrape(d.HTTPAddr, name) }

// Scrape reads the sample name (with its labels, if any, as written) from the Prometheus text
// at http://addr/metrics: -1 when absent or unreachable.
func Scrape(addr, name string) float64 {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// SyncBuffer is a bytes.Buffer that goroutines may write to and read at the same time.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
