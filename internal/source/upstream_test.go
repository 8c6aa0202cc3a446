package source

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"5", 5 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"60", 60 * time.Second, true},
		{"61", MaxRetryAfter, true},
		{"1860000000", MaxRetryAfter, true},                 // 59 years
		{"9999999999", MaxRetryAfter, true},                 // overflowed time.Duration before
		{"99999999999999999999999999", MaxRetryAfter, true}, // overflows uint64
		{"-5", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.AddDate(59, 0, 0).Format(http.TimeFormat), MaxRetryAfter, true},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDescribeHidesDetails(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "connection refused"},
		{&net.DNSError{Name: "nowhere.invalid", Err: "no such host"}, "name lookup failed"},
		{fmt.Errorf("open /var/run/secrets/creds.json: %w", errors.New("no such file")), "transport error"},
	} {
		got := describe(tc.err)
		if got != tc.want || strings.Contains(got, "/") {
			t.Errorf("describe(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	e := &Error{Kind: Unavailable, Path: "s3://b/k", Msg: "object store b unreachable", Err: errors.New("open /home/svc/.aws/credentials: denied")}
	if p := e.Public(); strings.Contains(p, "/home/svc") || !strings.Contains(p, "s3://b/k") || strings.HasPrefix(p, "source:") {
		t.Errorf("Public() = %q: must name the path and hide the cause and the package prefix", p)
	}
	if !strings.HasPrefix(e.Error(), "source: ") {
		t.Errorf("Error() = %q: logs keep the package prefix", e.Error())
	}
}
