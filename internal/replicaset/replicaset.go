// Package replicaset runs several `pact serve` replicas on one machine for
// the tests and the benchmarks (issue 30): real processes of the pact
// binary sharing one PostgreSQL database and one identity (each replica
// has its own PACT_HOME, a copy of the first one's: the same signing key,
// pairwise-sub secret and data key, as on several machines), behind a real
// nginx, everything on 127.0.0.1.
//
// The issuer is nginx's URL: devices enrol and call there, and any replica
// answers for it. A test may also call one replica directly (Replica.URL)
// to show that what one replica decided holds on another.
package replicaset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options of Start.
type Options struct {
	Pact     string   // the pact binary
	Database string   // a PostgreSQL URL (a database of the set's own)
	N        int      // how many replicas (at least 1)
	Dir      string   // an empty folder of the set's own: homes, nginx's files
	Serve    []string // more `pact serve` flags for every replica (--rate-limit 20)
	Env      []string // more environment for every pact process
	Nginx    string   // the nginx binary ("" = FindNginx's)
}

// Set is a running set of replicas behind nginx.
type Set struct {
	// URL is nginx's, the issuer: what devices use.
	URL      string
	Replicas []*Replica

	o     Options
	nginx *proc
}

// Replica is one `pact serve` process.
type Replica struct {
	Addr string // 127.0.0.1:PORT
	URL  string // http://Addr: this replica alone
	Home string // its PACT_HOME
	set  *Set
	p    *proc
}

// proc is a running process and its output.
type proc struct {
	cmd  *exec.Cmd
	out  *buffer
	done chan struct{}
	err  error
}

type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func start(cmd *exec.Cmd) (*proc, error) {
	p := &proc{cmd: cmd, out: &buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop signals the process and waits for it (at most wait), then kills it.
func (p *proc) stop(sig os.Signal, wait time.Duration) {
	if p == nil || p.exited() {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(wait):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// FreeAddr is a free port on 127.0.0.1, as HOST:PORT.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Start makes the identity (pact init --issuer http://NGINX) in the first
// replica's home, starts that replica (which makes the data key), copies
// its home to the others' (keys and settings, no database file), starts
// them, then nginx in front of them; it returns once every replica and
// nginx answer /readyz 200. On an error, whatever started is stopped.
func Start(ctx context.Context, o Options) (s *Set, err error) {
	if o.N < 1 {
		return nil, errors.New("replicaset: at least one replica")
	}
	if o.Nginx == "" {
		p, run, why, err := FindNginx()
		if err != nil {
			return nil, err
		}
		if !run {
			return nil, errors.New(why)
		}
		o.Nginx = p
	}
	lb, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	s = &Set{URL: "http://" + lb, o: o}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	var addrs []string
	for i := range o.N {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, addr)
		s.Replicas = append(s.Replicas, &Replica{Addr: addr, URL: "http://" + addr, Home: filepath.Join(o.Dir, fmt.Sprintf("replica%d", i+1)), set: s})
	}
	first := s.Replicas[0]
	if out, err := s.Command(ctx, first.Home, "init", "--issuer", s.URL).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pact init --issuer %s: %v\n%s", s.URL, err, out)
	}
	if err := first.Start(ctx); err != nil {
		return nil, err
	}
	for _, r := range s.Replicas[1:] {
		if err := copyHome(first.Home, r.Home); err != nil {
			return nil, err
		}
		if err := r.Start(ctx); err != nil {
			return nil, err
		}
	}
	prefix := filepath.Join(o.Dir, "nginx")
	if err := os.MkdirAll(filepath.Join(prefix, "tmp"), 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(prefix, lb, addrs)), 0o600); err != nil {
		return nil, err
	}
	if s.nginx, err = start(exec.Command(o.Nginx, "-p", prefix, "-c", conf, "-e", filepath.Join(prefix, "error.log"))); err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	if err := waitReady(ctx, s.URL, s.nginx, func() string { return s.NginxLog() }); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	return s, nil
}

// Command is pact run with PACT_HOME home (file keyring) and the set's
// database (PACT_DATABASE_URL) and environment.
func (s *Set) Command(ctx context.Context, home string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, s.o.Pact, args...)
	c.Env = append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1", "PACT_DEBUG=", "PACT_DATABASE_URL="+s.o.Database)
	c.Env = append(c.Env, s.o.Env...)
	c.WaitDelay = time.Second
	return c
}

// Database is the set's database URL.
func (s *Set) Database() string { return s.o.Database }

// OperatorHome is the PACT_HOME an operator's commands (pact serve user
// add, provider add) can run in: the first replica's.
func (s *Set) OperatorHome() string { return s.Replicas[0].Home }

// Start starts the replica (again, after Kill) on its address, and returns
// once it answers /readyz 200.
func (r *Replica) Start(ctx context.Context) error {
	args := append([]string{"serve", "--addr", r.Addr}, r.set.o.Serve...)
	cmd := r.set.Command(context.WithoutCancel(ctx), r.Home, args...)
	p, err := start(cmd)
	if err != nil {
		return fmt.Errorf("starting pact serve: %w", err)
	}
	r.p = p
	if err := waitReady(ctx, r.URL, p, r.Logs); err != nil {
		return fmt.Errorf("replica %s: %w", r.Addr, err)
	}
	return nil
}

// Kill kills the replica with SIGKILL and waits until it is gone; died is
// when that was seen.
func (r *Replica) Kill() (died time.Time, err error) {
	if r.p == nil || r.p.exited() {
		return time.Time{}, fmt.Errorf("replica %s is not running", r.Addr)
	}
	if err := r.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return time.Time{}, err
	}
	select {
	case <-r.p.done:
		return time.Now(), nil
	case <-time.After(30 * time.Second):
		return time.Time{}, fmt.Errorf("replica %s still running 30 s after SIGKILL", r.Addr)
	}
}

// Running reports whether the replica's process runs.
func (r *Replica) Running() bool { return r.p != nil && !r.p.exited() }

// Logs is what the replica wrote (JSON lines on stderr).
func (r *Replica) Logs() string {
	if r.p == nil {
		return ""
	}
	return r.p.out.String()
}

// NginxLog is nginx's error log.
func (s *Set) NginxLog() string {
	b, _ := os.ReadFile(filepath.Join(s.o.Dir, "nginx", "error.log"))
	return string(b)
}

// Stop stops every replica (SIGTERM, as an operator would; at most 30 s
// each) and nginx.
func (s *Set) Stop() {
	var wg sync.WaitGroup
	for _, r := range s.Replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.p.stop(syscall.SIGTERM, 30*time.Second)
		}()
	}
	wg.Wait()
	s.nginx.stop(syscall.SIGQUIT, 10*time.Second)
}

// waitReady polls url+"/readyz" until it answers 200 (at most 60 s), and
// fails at once when p exits.
func waitReady(ctx context.Context, url string, p *proc, logs func() string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := hc.Get(url + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited (%v) before it was ready:\n%s", p.err, logs())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready in 60 s:\n%s", logs())
		}
	}
}

// copyHome copies a PACT_HOME's files (the profile's settings and the file
// keyring: the same keys, as copied to another machine), but no database
// file and no lock file.
func copyHome(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		name := d.Name()
		if strings.HasSuffix(name, ".lock") || strings.Contains(name, ".db") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
}
