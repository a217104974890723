package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The workloads of workqueue/examples/workqueue_bench.rs, with its constants.
const (
	churnKeys         = 10_000
	churnAdds         = 2_000_000
	delayKeysDefault  = 200_000
	delayKeysPerMs    = 100
	ratelimitKeys     = 10_000
	ratelimitRequeues = 20
)

func runWorkqueue(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: peerbench workqueue <churn|delay|ratelimit>")
	}
	switch args[0] {
	case "churn":
		churn().print()
	case "delay":
		delay().print()
	case "ratelimit":
		ratelimit().print()
	default:
		return fmt.Errorf("unknown workqueue workload %q", args[0])
	}
	return nil
}

// key is the Rust side's `key(i)`: `ns-<i%100>/pod-<i>`.
func key(i int) string { return fmt.Sprintf("ns-%d/pod-%d", i%100, i) }

// churn: 2 producers add 2,000,000 times round-robin over 10,000 keys while 2 workers get and
// mark done; the queue is shut down with drain once the producers are finished.
func churn() record {
	keys := make([]string, churnKeys)
	for i := range keys {
		keys[i] = key(i)
	}
	q := workqueue.NewTyped[string]()
	start := time.Now()
	var gets atomic.Int64
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			n := int64(0)
			for {
				k, shutdown := q.Get()
				if shutdown {
					break
				}
				n++
				q.Done(k)
			}
			gets.Add(n)
		})
	}
	var producers sync.WaitGroup
	for p := range 2 {
		producers.Go(func() {
			for n := range churnAdds / 2 {
				q.Add(keys[(n*2+p)%churnKeys])
			}
		})
	}
	producers.Wait()
	q.ShutDownWithDrain()
	workers.Wait()
	wall := time.Since(start)
	return record{
		"workload": "churn", "impl": "client-go", "keys": churnKeys, "adds": churnAdds,
		"producers": 2, "workers": 2, "wall_ms": round2(millis(wall)), "loadavg_1m": loadavg(),
		"adds_per_s": math.Round(churnAdds / wall.Seconds()), "gets": gets.Load(),
		"cpu_ms": processCPU().Milliseconds(), "peak_rss_kb": peakRSSKB(),
	}
}

// rng is the Rust side's xorshift64*, so both sides draw the same delays.
type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r >> 12
	*r ^= *r << 25
	*r ^= *r >> 27
	return uint64(*r) * 0x2545_F491_4F6C_DD1D
}

// percentile of sorted nanoseconds, in µs, picked as the Rust side picks it.
func percentile(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(float64(len(sorted)-1)*p + 0.5)
	return float64(sorted[idx]) / 1e3
}

func delayKeys() int {
	if n, err := strconv.Atoi(os.Getenv("WQ_DELAY_KEYS")); err == nil {
		return n
	}
	return delayKeysDefault
}

// delay: 200,000 distinct keys added with AddAfter a uniform delay in [0, 50 ms], paced at 100
// keys a millisecond, 2 workers; lateness is the time a key was got minus the time it was due.
func delay() record {
	n := delayKeys()
	q := workqueue.NewTypedDelayingQueue[string]()
	base := time.Now()
	due := make([]atomic.Int64, n) // ns since base
	var gets atomic.Int64
	lateness := make([][]int64, 2)
	var workers sync.WaitGroup
	for w := range 2 {
		workers.Go(func() {
			mine := make([]int64, 0, n/2+1)
			for {
				k, shutdown := q.Get()
				if shutdown {
					break
				}
				now := int64(time.Since(base))
				i, _ := strconv.Atoi(k[strings.LastIndexByte(k, '-')+1:])
				mine = append(mine, max(now-due[i].Load(), 0))
				q.Done(k)
				if gets.Add(1) == int64(n) {
					q.ShutDown()
				}
			}
			lateness[w] = mine
		})
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(i)
	}
	r := rng(0x9E37_79B9_7F4A_7C15)
	start := time.Now()
	for i, k := range keys {
		if i%delayKeysPerMs == 0 {
			// Batch j goes in at start + j ms, as on the Rust side.
			time.Sleep(time.Until(start.Add(time.Duration(i/delayKeysPerMs) * time.Millisecond)))
		}
		d := time.Duration(r.next()%50_001) * time.Microsecond
		due[i].Store(int64(time.Since(base) + d))
		q.AddAfter(k, d)
	}
	workers.Wait()
	wall := time.Since(start)
	all := slices.Concat(lateness...)
	slices.Sort(all)
	return record{
		"workload": "delay", "impl": "client-go", "keys": n, "max_delay_ms": 50,
		"keys_per_ms": delayKeysPerMs, "workers": 2,
		"gets": len(all), "wall_ms": round2(millis(wall)),
		"lateness_p50_us": round2(percentile(all, 0.50)),
		"lateness_p99_us": round2(percentile(all, 0.99)),
		"lateness_max_us": round2(percentile(all, 1.0)),
		"cpu_ms":          processCPU().Milliseconds(), "loadavg_1m": loadavg(), "peak_rss_kb": peakRSSKB(),
	}
}

// ratelimit: 10,000 keys, each requeued with AddRateLimited 20 times and then forgotten, with
// the exponential per-item limiter alone (base 1 µs, cap 100 ms), 2 workers.
func ratelimit() record {
	q := workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Microsecond, 100*time.Millisecond))
	var forgotten, gets atomic.Int64
	start := time.Now()
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				gets.Add(1)
				if q.NumRequeues(k) < ratelimitRequeues {
					q.AddRateLimited(k)
					q.Done(k)
					continue
				}
				q.Forget(k)
				q.Done(k)
				if forgotten.Add(1) == ratelimitKeys {
					q.ShutDown()
				}
			}
		})
	}
	for i := range ratelimitKeys {
		q.Add(key(i))
	}
	workers.Wait()
	wall := time.Since(start)
	return record{
		"workload": "ratelimit", "impl": "client-go", "keys": ratelimitKeys,
		"requeues_per_key": ratelimitRequeues,
		"limiter":          "ItemExponentialFailure(base 1us, cap 100ms)", "workers": 2,
		"wall_ms": round2(millis(wall)), "gets": gets.Load(),
		"cpu_ms": processCPU().Milliseconds(), "loadavg_1m": loadavg(), "peak_rss_kb": peakRSSKB(),
	}
}
