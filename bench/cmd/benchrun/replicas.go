package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/device"
	"github.com/pact-cli/pact/internal/replicaset"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
)

// Rows 15 and 16 (issue 30): several `pact serve` replicas on one
// PostgreSQL behind nginx (internal/replicaset: real processes, a real
// nginx, all on 127.0.0.1).
//
// 15. Authenticated calls per second through nginx to 1, 2 and 3 replicas:
// GET /v1/devices from 8 devices at once, each call with a fresh device
// token, so that every call asks the database for the device, records
// its jti once and counts it in its rate window (the work every API call
// does before its own). On one 2-core machine more replicas cannot be
// faster; the row shows that they are not slower, i.e. that nothing
// serialises them (informational).
//
// 16. The time from a replica's death (SIGKILL, seen exited) to the next
// call served through nginx, and the slowest of the next six calls (one of
// which nginx first sends to the dead replica, then to the next one),
// medians of five deaths.                                   target < 1 s
// And how long nginx takes to send calls to the replica started again
// (its fail_timeout; informational).

const (
	replicaDevices  = 8
	replicaMeasure  = 5 * time.Second
	replicaWarmup   = time.Second
	replicaFailures = 5
)

func replicaRows(tmp, pact string) ([]row, error) {
	if _, run, why, err := replicaset.FindNginx(); err != nil || !run {
		if err == nil {
			err = fmt.Errorf("%s", why)
		}
		return nil, err
	}
	server, stop, err := startPostgres()
	if err != nil {
		return nil, err
	}
	defer stop()
	var rps []float64
	var rows []row
	for n := 1; n <= 3; n++ {
		r, set, clients, err := replicaThroughput(tmp, pact, server, n)
		if err != nil {
			if set != nil {
				set.Stop()
			}
			return rows, err
		}
		rps = append(rps, r)
		if n < 3 {
			set.Stop()
			dropReplicaDatabases(server)
			continue
		}
		next, slowest, rejoined, err := replicaFailover(set, clients[0])
		set.Stop()
		dropReplicaDatabases(server)
		if err != nil {
			return rows, err
		}
		rows = append(rows,
			row{name: "15. authenticated calls/s through nginx, 1 / 2 / 3 replicas", value: fmt.Sprintf("%.0f / %.0f / %.0f per s", rps[0], rps[1], rps[2]),
				ratio: rps[2] / rps[0]},
			row{name: "16. replica killed (SIGKILL): next call served after", value: fmt.Sprintf("%s (slowest of the next 6: %s)", next.Round(10*time.Microsecond), slowest.Round(10*time.Microsecond)),
				measured: slowest.Seconds(), target: 1, strictLT: true},
			row{name: "16'. a replica started again is sent calls after", value: rejoined.Round(10*time.Millisecond).String() + " (nginx's fail_timeout)"})
	}
	return rows, nil
}

func replicaDatabase(n int) string { return fmt.Sprintf("pact_bench_replicas_%d_%d", os.Getpid(), n) }

// dropReplicaDatabases drops the databases of the sets (when the server
// is not a throwaway one: PACT_BENCH_POSTGRES_URL).
func dropReplicaDatabases(server string) {
	c, err := pgx.Connect(context.Background(), server)
	if err != nil {
		return
	}
	defer c.Close(context.Background())
	for n := 1; n <= 3; n++ {
		c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{replicaDatabase(n)}.Sanitize()+" WITH (FORCE)")
	}
}

// replicaThroughput starts n replicas on a database of their own, enrols
// the devices, and measures the calls per second they serve.
func replicaThroughput(tmp, pact, server string, n int) (float64, *replicaset.Set, []*device.Client, error) {
	ctx := context.Background()
	name := replicaDatabase(n)
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		return 0, nil, nil, err
	}
	_, err = c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	c.Close(ctx)
	if err != nil {
		return 0, nil, nil, err
	}
	dir := filepath.Join(tmp, fmt.Sprintf("replicas%d", n))
	set, err := replicaset.Start(ctx, replicaset.Options{Pact: pact, Database: strings.Replace(server, "/postgres?", "/"+name+"?", 1), N: n, Dir: dir,
		Serve: []string{"--rate-limit", "100000000"}})
	if err != nil {
		return 0, nil, nil, err
	}
	var clients []*device.Client
	for i := range replicaDevices {
		out, err := set.Command(ctx, set.OperatorHome(), "serve", "user", "add", fmt.Sprint("bench", i), "--json").Output()
		if err != nil {
			return 0, set, nil, fmt.Errorf("pact serve user add: %w", err)
		}
		var code struct{ Code string }
		if err := json.Unmarshal(out, &code); err != nil {
			return 0, set, nil, err
		}
		home := filepath.Join(dir, fmt.Sprint("device", i))
		if out, err := set.Command(ctx, home, "init", "--server", set.URL, "--code", code.Code, "--json").CombinedOutput(); err != nil {
			return 0, set, nil, fmt.Errorf("pact init --server: %v\n%s", err, out)
		}
		cl, err := benchDevice(home)
		if err != nil {
			return 0, set, nil, err
		}
		clients = append(clients, cl)
	}
	var served atomic.Int64
	var counting atomic.Bool
	var firstErr error
	var errOnce sync.Once
	stopAt := time.Now().Add(replicaWarmup + replicaMeasure)
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stopAt) {
				if _, err := cl.Devices(ctx); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				if counting.Load() {
					served.Add(1)
				}
			}
		}()
	}
	time.Sleep(replicaWarmup)
	counting.Store(true)
	start := time.Now()
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, set, nil, fmt.Errorf("%d replicas: a call failed: %w", n, firstErr)
	}
	return float64(served.Load()) / elapsed.Seconds(), set, clients, nil
}

// replicaFailover kills a replica five times (each started again after),
// and returns the medians of the time from its death to the next call
// served and of the slowest of the next six calls.
func replicaFailover(set *replicaset.Set, cl *device.Client) (next, slowest, rejoined time.Duration, err error) {
	ctx := context.Background()
	var nexts, slows, rejoin []time.Duration
	for i := range replicaFailures {
		r := set.Replicas[i%len(set.Replicas)]
		died, err := r.Kill()
		if err != nil {
			return 0, 0, 0, err
		}
		var worst time.Duration
		for j := 0; j < 6; j++ {
			start := time.Now()
			if _, err := cl.Devices(ctx); err != nil {
				return 0, 0, 0, fmt.Errorf("call %d after replica %s died: %w\nnginx: %s", j+1, r.Addr, err, tail(set.NginxLog()))
			}
			if j == 0 {
				nexts = append(nexts, time.Since(died))
			}
			worst = max(worst, time.Since(start))
		}
		slows = append(slows, worst)
		if err := r.Start(ctx); err != nil {
			return 0, 0, 0, err
		}
		// nginx sends it calls again once its fail_timeout has passed;
		// the next death is measured with every replica in rotation.
		started := time.Now()
		for servedBy(r) == 0 {
			if _, err := cl.Devices(ctx); err != nil {
				return 0, 0, 0, err
			}
			if time.Since(started) > 30*time.Second {
				return 0, 0, 0, fmt.Errorf("replica %s, started again, was sent no call in 30 s", r.Addr)
			}
			time.Sleep(10 * time.Millisecond)
		}
		rejoin = append(rejoin, time.Since(started))
	}
	return medianDuration(nexts), medianDuration(slows), medianDuration(rejoin), nil
}

// servedBy counts the API calls the replica's current process logged.
func servedBy(r *replicaset.Replica) int {
	return strings.Count(r.Logs(), `"route":"/v1/devices"`)
}

func medianDuration(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// benchDevice is the client of the device enrolled in home.
func benchDevice(home string) (*device.Client, error) {
	dirs := profileDirs(home)
	sec, err := secrets.Open("file", dirs.Data, 0)
	if err != nil {
		return nil, err
	}
	p := &profile.Profile{Name: "default", Dirs: dirs, Secrets: sec}
	c, err := p.Load()
	if err != nil {
		return nil, err
	}
	return device.NewClient(p, c, &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}})
}
