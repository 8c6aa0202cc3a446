package cancel

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWatch(t *testing.T) {
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	tests := []struct {
		name    string
		ctx     context.Context
		wantNil bool  // a context that cannot end needs no flag
		wantErr error // the error Check unwinds with; nil = not raised
	}{
		{"background", context.Background(), true, nil},
		{"nil", nil, true, nil},
		{"live", live, false, nil},
		{"cancelled", cancelled, false, context.Canceled},
		{"past deadline", expired, false, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, release := Watch(tt.ctx)
			defer release()
			if (f == nil) != tt.wantNil {
				t.Fatalf("flag nil = %v, want %v", f == nil, tt.wantNil)
			}
			var err error
			func() {
				defer Recover(&err)
				f.Check()
			}()
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Check unwound with %v, want %v", err, tt.wantErr)
			}
			if f.Raised() != (tt.wantErr != nil) || !errors.Is(f.Err(), tt.wantErr) {
				t.Fatalf("Raised %v Err %v", f.Raised(), f.Err())
			}
		})
	}
}

// TestRaisedWhenContextEnds: a loop that checks the flag stops soon after the deadline.
func TestRaisedWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	f, release := Watch(ctx)
	defer release()
	start := time.Now()
	var err error
	func() {
		defer Recover(&err)
		for {
			f.Check()
		}
	}()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stopped %v after a 20ms deadline", d)
	}
}

func TestRecoverPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the original panic", r)
		}
	}()
	var err error
	func() {
		defer Recover(&err)
		panic("boom")
	}()
	t.Fatal("the panic was swallowed")
}

func TestRunAndUnwind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, release := Watch(ctx)
	defer release()
	if Run(func() { f.Check() }) {
		t.Fatal("stopped before the context ended")
	}
	cancel()
	for !f.Raised() { // AfterFunc raises the flag on its own goroutine
		time.Sleep(time.Millisecond)
	}
	if !Run(func() { f.Check(); t.Error("Check returned after the context ended") }) {
		t.Fatal("Run did not report the stop")
	}
	var err error
	func() {
		defer Recover(&err)
		Unwind(ctx.Err())
	}()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Unwind: %v", err)
	}
}
