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

package supervise

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// statLine is a /proc/PID/stat line of 52 fields for pid 42, with the
// given command, state and start time (field 22).
func statLine(comm, state, start string) string {
	fields := []string{"42", "(" + comm + ")", state}
	for i := 4; i <= 52; i++ {
		if i == 22 {
			fields = append(fields, start)
			continue
		}
		fields = append(fields, strconv.Itoa(i))
	}
	return strings.Join(fields, " ") + "\n"
}

func TestReadStat(t *testing.T) {
	tests := []struct {
		name    string
		data    string // "" for no process
		want    procStat
		wantErr error // nil for success; errAny for any error
	}{
		{name: "plain", data: statLine("sleep", "S", "987654"), want: procStat{state: 'S', startTicks: 987654}},
		{name: "spaces and parentheses in the command", data: statLine("a) (b c", "S", "987654"), want: procStat{state: 'S', startTicks: 987654}},
		{name: "zombie", data: statLine("x", "Z", "5"), want: procStat{state: 'Z', startTicks: 5}},
		{name: "no such process", wantErr: ErrNotRunning},
		{name: "no parenthesis", data: "42 sleep S 1\n", wantErr: errAny},
		{name: "too short", data: "42 (sleep) S 1 2 3\n", wantErr: errAny},
		{name: "bad start time", data: statLine("x", "S", "nope"), wantErr: errAny},
		{name: "state of two letters", data: statLine("x", "SS", "5"), wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.data != "" {
				if err := os.MkdirAll(filepath.Join(root, "42"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "42", "stat"), []byte(tt.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fs, err := procfs.NewFS(root)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readStatIn(fs, 42)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("readStatIn error = %v, want none", err)
			case errors.Is(tt.wantErr, errAny) && err == nil:
				t.Fatalf("readStatIn = %+v, want an error", got)
			case tt.wantErr != nil && !errors.Is(tt.wantErr, errAny) && !errors.Is(err, tt.wantErr):
				t.Fatalf("readStatIn error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("readStatIn = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// errAny stands for any error in a test table.
var errAny = errors.New("any error")

func TestIdentify(t *testing.T) {
	self, err := Identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PID != os.Getpid() || self.StartTicks <= 0 || self.BootID == "" {
		t.Fatalf("Identify(self) = %+v", self)
	}
	if alive, err := self.Alive(); err != nil || !alive {
		t.Fatalf("self.Alive() = %v, %v", alive, err)
	}
	reused := self
	reused.StartTicks++
	if alive, err := reused.Alive(); err != nil || alive {
		t.Fatalf("an identity with another start time is alive: %v, %v", alive, err)
	}
	otherBoot := self
	otherBoot.BootID = "not-this-boot"
	if alive, _ := otherBoot.Alive(); alive {
		t.Fatal("an identity from another boot is alive")
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, err := Identify(pid); !errors.Is(err, ErrNotRunning) {
			t.Errorf("Identify(%d) error = %v, want ErrNotRunning", pid, err)
		}
	}
}

func waitExit(t *testing.T, exits *ExitNotice, within time.Duration) Exit {
	t.Helper()
	select {
	case e := <-exits.C():
		return e
	case <-time.After(within):
		t.Fatalf("no exit within %s", within)
		return Exit{}
	}
}

func TestLaunch(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "logs", "w.log")
	id, exits, err := Launch(LaunchSpec{
		Command: []string{"sh", "-c", `echo "out $GREETING $(pwd)"; echo err >&2; exit 3`},
		Dir:     dir,
		Env:     []string{"GREETING=hello"},
		LogFile: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := waitExit(t, exits, 10*time.Second)
	if e.Reason != ReasonExited || e.ExitCode != 3 || !e.Known() || e.Identity.PID != id.PID {
		t.Fatalf("exit = %+v", e)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); !strings.Contains(got, "out hello "+dir) || !strings.Contains(got, "err") {
		t.Fatalf("log = %q", got)
	}
	for path, want := range map[string]os.FileMode{log: 0o600, filepath.Dir(log): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s mode = %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	if _, _, err := Launch(LaunchSpec{}); err == nil {
		t.Error("launching no command succeeded")
	}
	if _, _, err := Launch(LaunchSpec{Command: []string{"/no/such/binary"}}); err == nil {
		t.Error("launching a missing binary succeeded")
	}
}

func TestLaunchedChildKilled(t *testing.T) {
	id, exits, err := Launch(LaunchSpec{Command: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if pgid, err := syscall.Getpgid(id.PID); err != nil || pgid != id.PID {
		t.Fatalf("the child is not its own process group leader: pgid %d, %v", pgid, err)
	}
	if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e := waitExit(t, exits, 10*time.Second)
	if e.Reason != ReasonSignaled || e.Signal != syscall.SIGKILL || e.ExitCode != -1 {
		t.Fatalf("exit = %+v", e)
	}
	if !strings.Contains(e.String(), "signal 9 (SIGKILL)") {
		t.Errorf("exit description %q", e.String())
	}
}

// startForeign starts a process the test reaps itself, standing in for a
// process tether adopts.
func startForeign(t *testing.T, args ...string) (*exec.Cmd, Identity) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var id Identity
	var err error
	for range 100 {
		if id, err = Identify(cmd.Process.Pid); err == nil {
			return cmd, id
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(err)
	return nil, Identity{}
}

func TestWatchAdopted(t *testing.T) {
	cmd, id := startForeign(t, "sleep", "1000")
	exits, stop, err := Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case e := <-exits.C():
		t.Fatalf("exit reported for a live process: %+v", e)
	case <-time.After(100 * time.Millisecond):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	e := waitExit(t, exits, 5*time.Second)
	if e.Reason != ReasonVanished || e.Known() || e.Identity != id {
		t.Fatalf("exit = %+v", e)
	}
}

func TestWatchGoneOrReused(t *testing.T) {
	_, id := startForeign(t, "sleep", "1000")
	reused := id
	reused.StartTicks--
	tests := []struct {
		name   string
		id     Identity
		reason string
	}{
		{"PID reused", reused, ReasonPIDReused},
		{"no such process", Identity{PID: 1 << 30, StartTicks: 1, BootID: id.BootID}, ReasonVanished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exits, stop, err := Watch(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if e := waitExit(t, exits, time.Second); e.Reason != tt.reason {
				t.Fatalf("reason = %s, want %s", e.Reason, tt.reason)
			}
		})
	}
}

func TestWatchStop(t *testing.T) {
	cmd, id := startForeign(t, "sleep", "1000")
	exits, stop, err := Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	time.Sleep(50 * time.Millisecond)
	_ = cmd.Process.Kill()
	select {
	case e := <-exits.C():
		t.Fatalf("a stopped watch reported %+v", e)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestStopKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild")
	tests := []struct {
		name    string
		script  string
		grace   time.Duration
		atLeast time.Duration
	}{
		{"honours SIGTERM", `sleep 1000 & echo $! > ` + pidFile + `; wait`, 5 * time.Second, 0},
		{"ignores SIGTERM", `trap "" TERM; sleep 1000 & echo $! > ` + pidFile + `; while :; do wait; done`, 300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(pidFile)
			id, exits, err := Launch(LaunchSpec{Command: []string{"sh", "-c", tt.script}})
			if err != nil {
				t.Fatal(err)
			}
			var grandchild int
			for deadline := time.Now().Add(5 * time.Second); grandchild == 0; {
				if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
					grandchild, _ = strconv.Atoi(strings.TrimSpace(string(data)))
				}
				if time.Now().After(deadline) {
					t.Fatal("the script never started its child")
				}
				time.Sleep(5 * time.Millisecond)
			}
			gc, err := Identify(grandchild)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := Stop(id, tt.grace); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tt.atLeast {
				t.Errorf("Stop returned after %s, before the %s grace", took, tt.atLeast)
			}
			waitExit(t, exits, 5*time.Second)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if alive, _ := gc.Alive(); !alive {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the process group's other member survived Stop")
				}
			}
			if err := Stop(id, time.Second); err != nil {
				t.Errorf("stopping an ended process: %v", err)
			}
		})
	}
}

func TestInherited(t *testing.T) {
	environ := []string{"PATH=/bin", "TETHER_HOOK=a", "TETHER_HOOKS=b", "EMPTY=", "NOEQUALS", "TETHER_STORE=/s"}
	cases := []struct {
		name  string
		unset []string
		want  []string
	}{
		{"nothing unset", nil, environ},
		{"exact names only", []string{"TETHER_HOOK", "TETHER_STORE"}, []string{"PATH=/bin", "TETHER_HOOKS=b", "EMPTY=", "NOEQUALS"}},
		{"a name without a value", []string{"NOEQUALS", "EMPTY"}, []string{"PATH=/bin", "TETHER_HOOK=a", "TETHER_HOOKS=b", "TETHER_STORE=/s"}},
		{"absent names", []string{"MISSING"}, environ},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := inherited(environ, c.unset)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("inherited(%v) = %q, want %q", c.unset, got, c.want)
			}
		})
	}
}

// TestFindLaunched finds a launched process again by its token and argv,
// as a launcher restarted after a crash does, and nothing else: not a
// descendant that inherited the token, not another token or argv, not a
// process that ended.
func TestFindLaunched(t *testing.T) {
	dir := t.TempDir()
	token := "uid-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	// The agent starts a descendant in a session of its own, as a dev
	// server would: it carries the token too, under another argv.
	command := []string{"sh", "-c", "setsid sleep 300 & echo $! > child.pid; exec sleep 301"}
	id, exits, err := Launch(LaunchSpec{Command: command, Dir: dir, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(id.PID, syscall.SIGKILL) })
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(filepath.Join(dir, "child.pid")); err == nil && strings.HasSuffix(string(data), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent's descendant did not start")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if p, err := procfs.NewProc(id.PID); err == nil {
			if argv, _ := p.CmdLine(); strings.Join(argv, " ") == "sleep 301" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent did not exec")
		}
	}

	tests := []struct {
		name  string
		token string
		want  int
	}{
		{"the token: the launched process, not its older-token-carrying descendant", token, id.PID},
		{"another token", token + "x", 0},
		{"no token", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FindLaunched(tt.token)
			if ok != (tt.want != 0) || got.PID != tt.want {
				t.Fatalf("FindLaunched = %v, %v; want pid %d", got, ok, tt.want)
			}
			if ok && got != id {
				t.Fatalf("identity %v, want %v", got, id)
			}
		})
	}
	if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, exits, 10*time.Second)
	// Once the agent is gone, its descendant is what carries the token; a
	// new launch has a token of its own (the next ordinal), so it is never
	// taken for the agent: see launchToken in controllers.
	if got, ok := FindLaunched(token); ok && got.PID != child {
		t.Fatalf("FindLaunched found %v after the process ended", got)
	}
}

func TestParseIdentityPrefix(t *testing.T) {
	id := Identity{PID: 4242, StartTicks: 987654}
	cases := []struct {
		in   string
		want Identity
		ok   bool
	}{
		{id.String(), id, true},
		{id.String() + " exited with code 3; it held hook a", id, true},
		{"pid 7 (start 0) killed by signal 9 (killed)", Identity{PID: 7}, true},
		{"pod w-3 failed: OOMKilled", Identity{}, false},
		{"pid 0 (start 5) exited", Identity{}, false},
		{"pid 12 (start x)", Identity{}, false},
		{"a crash of pid 12 (start 3)", Identity{}, false},
		{"", Identity{}, false},
	}
	for _, c := range cases {
		got, ok := ParseIdentityPrefix(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseIdentityPrefix(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestWaitingHoldsNoThreadPerProcess: a Worker's process, launched or
// adopted, is waited for by the one exit poller, not by an OS thread
// blocked in poll(2), wait4(2) or waitid(2) (48 KB of Go stacks each, and
// a kernel thread), nor by a goroutine of its own (about 6 KB of stack):
// neither threads in those calls nor goroutines grow with the number of
// processes waited for, every end is still reported, and each wait's
// pidfd is released once it is.
func TestWaitingHoldsNoThreadPerProcess(t *testing.T) {
	const n = 64
	cases := []struct {
		name  string
		start func(t *testing.T) (Identity, *ExitNotice)
	}{
		{"launched", func(t *testing.T) (Identity, *ExitNotice) {
			id, exits, err := Launch(LaunchSpec{Command: []string{"sleep", "60"}})
			if err != nil {
				t.Fatal(err)
			}
			return id, exits
		}},
		{"adopted", func(t *testing.T) (Identity, *ExitNotice) {
			id, _ := startSleep(t)
			exits, _, err := Watch(id)
			if err != nil {
				t.Fatal(err)
			}
			return id, exits
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, goroutines := waitingThreads(t), runtime.NumGoroutine()
			ids := make([]Identity, n)
			exits := make([]*ExitNotice, n)
			for i := range n {
				ids[i], exits[i] = tc.start(t)
				t.Cleanup(func() { _ = syscall.Kill(ids[i].PID, syscall.SIGKILL) })
			}
			time.Sleep(200 * time.Millisecond)
			if grown := waitingThreads(t) - before; grown > n/4 {
				t.Errorf("waiting for %d processes put %d OS threads in a blocking wait", n, grown)
			}
			// The poller's own goroutine, started at its first use, and
			// the runtime's or the test's own come and go: a few, never n.
			if grown := runtime.NumGoroutine() - goroutines; grown > n/8 {
				t.Errorf("waiting for %d processes holds %d more goroutines", n, grown)
			}
			for i := range n {
				if err := syscall.Kill(ids[i].PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			for i := range n {
				select {
				case e := <-exits[i].C():
					if e.Identity.PID != ids[i].PID {
						t.Errorf("exit of pid %d reported for pid %d", e.Identity.PID, ids[i].PID)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the end of pid %d was never reported", ids[i].PID)
				}
			}
			if p, err := exitPollerOf(); err != nil || p.pending() != 0 {
				t.Errorf("the poller still holds %d waits after every end (%v)", p.pending(), err)
			}
		})
	}
}

// startSleep starts a child that is not launched through Launch, to be
// watched as an adopted process; the test reaps it, and the watch sees it
// end.
func startSleep(t *testing.T) (Identity, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	id, err := Identify(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return id, cmd
}

// TestExitNotice: an exit reaches every caller of Notify and C, whether
// they asked before or after it came, exactly once, and a stopped watch
// delivers nothing and leaves no wait behind.
func TestExitNotice(t *testing.T) {
	id, cmd := startSleep(t)
	p, err := exitPollerOf()
	if err != nil {
		t.Fatal(err)
	}
	stopped, stop, err := Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	var stoppedCalls atomic.Int32
	stopped.Notify(func(Exit) { stoppedCalls.Add(1) })
	stop()
	stop()

	exits, stopWatched, err := Watch(id)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWatched()
	if _, ended := exits.Ended(); ended {
		t.Fatal("a running process's notice says it ended")
	}
	if got := p.pending(); got != 1 {
		t.Fatalf("the poller holds %d waits, want 1 (the stopped watch released)", got)
	}
	before := make(chan Exit, 2)
	exits.Notify(func(e Exit) { before <- e })
	exits.Notify(func(e Exit) { before <- e })
	early := exits.C()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	e := waitExit(t, exits, 10*time.Second)
	if e.Identity != id || e.Reason != ReasonVanished {
		t.Errorf("exit = %+v, want a vanished end of %v", e, id)
	}
	if exits.C() != early {
		t.Error("C returned another channel after the exit")
	}
	for range 2 {
		select {
		case got := <-before:
			if got != e {
				t.Errorf("Notify got %+v, want %+v", got, e)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a Notify made before the exit was never called")
		}
	}
	late := make(chan Exit, 1)
	exits.Notify(func(e Exit) { late <- e })
	select {
	case got := <-late:
		if got != e {
			t.Errorf("late Notify got %+v, want %+v", got, e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Notify made after the exit was never called")
	}
	if got, ended := exits.Ended(); !ended || got != e {
		t.Errorf("Ended() = %+v, %v", got, ended)
	}
	time.Sleep(100 * time.Millisecond)
	if n := stoppedCalls.Load(); n != 0 {
		t.Errorf("a stopped watch delivered %d exits", n)
	}
	if got := p.pending(); got != 0 {
		t.Errorf("the poller holds %d waits after the exit", got)
	}
}

// waitSyscalls are the numbers, by GOARCH, of the system calls a thread
// blocks in to wait for a process: poll, ppoll, wait4, waitid.
var waitSyscalls = map[string][]string{
	"amd64": {"7", "271", "61", "247"},
	"arm64": {"73", "260", "95"},
}

// waitingThreads counts the test process's threads blocked in one of
// waitSyscalls (/proc/self/task/TID/syscall names the call a thread is in).
func waitingThreads(t *testing.T) int {
	t.Helper()
	calls, ok := waitSyscalls[runtime.GOARCH]
	if !ok {
		t.Skipf("no system call numbers for %s", runtime.GOARCH)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		data, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "syscall"))
		if err != nil {
			continue // the thread ended, or the kernel hides it
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 && slices.Contains(calls, fields[0]) {
			n++
		}
	}
	return n
}
