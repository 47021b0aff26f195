/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/tether-dev/tether/internal/config"
)

// The environment a notifier gets besides tether run's own, so that a
// one-line command (notify-send through sh -c) needs no JSON parser.
const (
	// EnvReason is the notify reason, such as WorkerCrashed.
	EnvReason = "TETHER_NOTIFY_REASON"
	// EnvKind is the kind of the object: Worker or Hook.
	EnvKind = "TETHER_NOTIFY_KIND"
	// EnvNamespace is the object's namespace.
	EnvNamespace = "TETHER_NOTIFY_NAMESPACE"
	// EnvName is the object's name.
	EnvName = "TETHER_NOTIFY_NAME"
	// EnvMessage is the Event's text.
	EnvMessage = "TETHER_NOTIFY_MESSAGE"
)

// outputLimit bounds how much of a notifier's output is kept for the log.
const outputLimit = 4 << 10

// Job is one run of a notifier.
type Job struct {
	// Notifier is the notifier to run.
	Notifier config.Notifier
	// Payload is what it reads on stdin.
	Payload Payload
}

// Result is how a run ended.
type Result struct {
	// Err is nil when the command exited with code 0.
	Err error
	// Duration is how long it ran.
	Duration time.Duration
	// Output is the start of its combined stdout and stderr.
	Output string
}

// Run runs n's command once with p as JSON on stdin, in a process group of
// its own that is killed when n's timeout or ctx ends.
func Run(ctx context.Context, n config.Notifier, p Payload) Result {
	start := time.Now()
	data, err := json.Marshal(p)
	if err != nil {
		return Result{Err: err}
	}
	timeout := n.Timeout.Duration
	if timeout <= 0 {
		timeout = config.DefaultNotifyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.Command[0], n.Command[1:]...)
	cmd.Stdin = bytes.NewReader(append(data, '\n'))
	out := &capped{limit: outputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(),
		EnvReason+"="+string(p.Reason), EnvKind+"="+p.Kind, EnvNamespace+"="+p.Namespace,
		EnvName+"="+p.Name, EnvMessage+"="+p.Message)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The whole group, so that a shell's children die with it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	res := Result{Duration: time.Since(start), Output: strings.TrimSpace(out.String())}
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Err = fmt.Errorf("killed after its timeout of %s", timeout)
	default:
		res.Err = err
	}
	return res
}

// capped keeps the first limit bytes written to it.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Runner runs Jobs on a fixed number of goroutines from a bounded queue.
// Submit never blocks, so the reconciler that submits is never held up by
// a slow notifier.
type Runner struct {
	workers int
	queue   chan Job
	log     logr.Logger
	done    func(Job, Result)
}

// NewRunner returns a Runner of workers goroutines and a queue of
// queueLen Jobs. done, when not nil, is called after each run.
func NewRunner(workers, queueLen int, log logr.Logger, done func(Job, Result)) *Runner {
	return &Runner{workers: max(workers, 1), queue: make(chan Job, max(queueLen, 1)), log: log, done: done}
}

// Submit queues j; false when the queue is full, and j is dropped.
func (r *Runner) Submit(j Job) bool {
	select {
	case r.queue <- j:
		return true
	default:
		return false
	}
}

// Start runs queued Jobs until ctx ends, then runs what is still queued
// (each within its own timeout) and returns. It is a manager.Runnable.
func (r *Runner) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case j := <-r.queue:
					r.run(context.Background(), j)
				case <-ctx.Done():
					r.drain()
					return
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

func (r *Runner) drain() {
	for {
		select {
		case j := <-r.queue:
			r.run(context.Background(), j)
		default:
			return
		}
	}
}

func (r *Runner) run(ctx context.Context, j Job) {
	res := Run(ctx, j.Notifier, j.Payload)
	kv := []any{"notifier", j.Notifier.Name, "reason", j.Payload.Reason,
		"object", j.Payload.Kind + "/" + j.Payload.Namespace + "/" + j.Payload.Name, "event", j.Payload.Event, "duration", res.Duration}
	if res.Err != nil {
		r.log.Error(res.Err, "notifier failed", append(kv, "output", res.Output)...)
	} else {
		r.log.Info("notified", kv...)
	}
	if r.done != nil {
		r.done(j, res)
	}
}
