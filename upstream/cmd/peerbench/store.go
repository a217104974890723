package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The workloads of store/examples/store_bench/, with its constants.
const (
	storeObjects = 100_000
	namespaces   = 100
	nodes        = 1_000
	scanLookups  = 1_000
	lists        = 100
	batch        = 1_000
	nodeIndex    = "node"
)

// lookups per get and index workload; KCM_STORE_BENCH_QUICK=1 shrinks them 100x, as on the
// Rust side.
func lookups() int {
	if os.Getenv("KCM_STORE_BENCH_QUICK") != "" {
		return 10_000
	}
	return 1_000_000
}

// scaled shrinks the loop count of the lookups that touch every object of a namespace or a
// node (client-go copies them into a fresh slice on each call) by div, so that a round takes
// a minute rather than a quarter of an hour; the figures are rates, and each count is in the
// output. KCM_STORE_BENCH_FULL=1 runs the Rust side's counts.
func scaled(n, div int) int {
	if os.Getenv("KCM_STORE_BENCH_FULL") != "" {
		return n
	}
	return max(n/div, 1)
}

func nsOf(i int) string   { return fmt.Sprintf("namespace-%03d", i%namespaces) }
func nameOf(i int) string { return fmt.Sprintf("web-%06d-7d9f8c6b5-x%04d", i, i%9973) }

// makePod is the Rust side's make_pod: 8 labels, one container, a node among 1,000 (at
// generation 1, every tenth pod moves to the next node).
func makePod(i, generation int) *corev1.Pod {
	node := i % nodes
	if i%10 == 0 {
		node = (i + generation) % nodes
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       nsOf(i),
			Name:            nameOf(i),
			UID:             types.UID(fmt.Sprintf("4f8c2a1e-0b7d-4c3e-9a5f-%012d", i)),
			ResourceVersion: fmt.Sprint(1000 + i + generation*storeObjects),
			Labels: map[string]string{
				"app":               fmt.Sprintf("app-%d", i%50),
				"tier":              []string{"frontend", "backend", "cache"}[i%3],
				"env":               []string{"prod", "staging"}[i%2],
				"version":           fmt.Sprintf("v%d", 1+generation),
				"team":              fmt.Sprintf("team-%d", i%20),
				"component":         "server",
				"track":             "stable",
				"pod-template-hash": fmt.Sprintf("7d9f8c6b%d", i%10),
			},
		},
		Spec: corev1.PodSpec{
			NodeName:   fmt.Sprintf("node-%04d", node),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/team/app:v1.2.3"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			PodIP: fmt.Sprintf("10.%d.%d.%d", i/65536%256, i/256%256, i%256),
		},
	}
}

// shuffled is the Rust side's fixed permutation of 0..N (7919 is coprime with 100,000).
func shuffled(i int) int { return (i*7919 + 13) % storeObjects }

// span is elapsed wall time and process CPU time.
type span struct{ wall, cpu time.Duration }

func (s *span) add(o span) { s.wall += o.wall; s.cpu += o.cpu }

type timer struct {
	wall time.Time
	cpu  time.Duration
}

func startTimer() timer { return timer{cpu: processCPU(), wall: time.Now()} }

func (t timer) span() span {
	return span{wall: time.Since(t.wall), cpu: processCPU() - t.cpu}
}

// rate is (ops per wall second, ops per CPU second).
func rate(ops int, s span) (float64, float64) {
	r := func(d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return math.Round(float64(ops) / d.Seconds())
	}
	return r(s.wall), r(s.cpu)
}

func threads() int { return min(max(runtime.NumCPU(), 2), 4) }

// fill streams the pods into insert in batches of 1,000, timing only insert; returns the time
// and the resident bytes per object. The garbage of making the pods is collected and returned
// to the OS before each RSS reading, so the figure is what the objects keep resident.
func fill(insert func([]*corev1.Pod) span) (span, int64) {
	debug.FreeOSMemory()
	rss0 := procStatusKB("VmRSS")
	var total span
	for b := range storeObjects / batch {
		pods := make([]*corev1.Pod, 0, batch)
		for i := b * batch; i < (b+1)*batch; i++ {
			pods = append(pods, makePod(i, 0))
		}
		total.add(insert(pods))
	}
	debug.FreeOSMemory()
	rss1 := procStatusKB("VmRSS")
	return total, max(rss1-rss0, 0) * 1024 / storeObjects
}

// updateAll times N updates (the next generation of every pod).
func updateAll(update func([]*corev1.Pod) span) span {
	var total span
	for b := range storeObjects / batch {
		pods := make([]*corev1.Pod, 0, batch)
		for i := b * batch; i < (b+1)*batch; i++ {
			pods = append(pods, makePod(i, 1))
		}
		total.add(update(pods))
	}
	return total
}

func check(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf(format, args...))
	}
}

func runStore(args []string) error {
	if len(args) == 2 && args[0] == "--child" {
		switch args[1] {
		case "indexer":
			storeIndexer().print()
		case "pods":
			storePodsOnly().print()
		default:
			return fmt.Errorf("unknown store child %q", args[1])
		}
		return nil
	}
	if len(args) != 0 {
		return fmt.Errorf("usage: peerbench store")
	}
	// Each measurement in a process of its own, so that its RSS figures are its own; the
	// objects-only baseline separates object bytes from what the store adds.
	pods, err := storeChild("pods")
	if err != nil {
		return err
	}
	indexer, err := storeChild("indexer")
	if err != nil {
		return err
	}
	if base, ok := pods["bytes_per_object"].(float64); ok {
		if b, ok := indexer["bytes_per_object"].(float64); ok {
			indexer["store_overhead_bytes_per_object"] = b - base
		}
	}
	pods.print()
	indexer.print()
	return nil
}

func storeChild(name string) (record, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "store", "--child", name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("store child %s: %w", name, err)
	}
	var r record
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil {
		return nil, fmt.Errorf("store child %s printed %q: %w", name, out, err)
	}
	return r, nil
}

// storeIndexer measures cache.NewIndexer with the namespace index and a node index, the
// store behind every client-go informer.
func storeIndexer() record {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		nodeIndex: func(obj any) ([]string, error) {
			if name := obj.(*corev1.Pod).Spec.NodeName; name != "" {
				return []string{name}, nil
			}
			return nil, nil
		},
	})
	insert, bytesPerObject := fill(func(pods []*corev1.Pod) span {
		t := startTimer()
		for _, p := range pods {
			_ = indexer.Add(p) // index functions never fail here
		}
		return t.span()
	})
	peakAfterInsert := peakRSSKB()
	check(len(indexer.ListKeys()) == storeObjects, "store holds %d objects", len(indexer.ListKeys()))

	keys := make([]string, storeObjects)
	for i := range keys {
		keys[i] = nsOf(i) + "/" + nameOf(i)
	}
	t := startTimer()
	found := 0
	for i := range lookups() {
		if _, ok, _ := indexer.GetByKey(keys[shuffled(i%storeObjects)]); ok {
			found++
		}
	}
	getOps, getCPUOps := rate(lookups(), t.span())
	check(found == lookups(), "found %d", found)

	t = startTimer()
	for range lists {
		check(len(indexer.List()) == storeObjects, "list")
	}
	list := t.span()

	nsNames := make([]string, namespaces)
	for i := range nsNames {
		nsNames[i] = nsOf(i)
	}
	nsLookups := scaled(lookups(), 100)
	t = startTimer()
	n := 0
	for i := range nsLookups {
		items, _ := indexer.ByIndex(cache.NamespaceIndex, nsNames[i%namespaces])
		n += len(items)
	}
	byNsOps, byNsCPUOps := rate(nsLookups, t.span())
	check(n == nsLookups*(storeObjects/namespaces), "by namespace: %d", n)

	nodeNames := make([]string, nodes)
	for i := range nodeNames {
		nodeNames[i] = fmt.Sprintf("node-%04d", i)
	}
	nodeLookups := scaled(lookups(), 10)
	t = startTimer()
	n = 0
	for i := range nodeLookups {
		items, _ := indexer.ByIndex(nodeIndex, nodeNames[i%nodes])
		n += len(items)
	}
	byNodeOps, byNodeCPUOps := rate(nodeLookups, t.span())
	check(n == nodeLookups*(storeObjects/nodes), "by node: %d", n)

	lister := corelisters.NewPodLister(indexer)
	sel, err := labels.Parse("app=app-7,tier in (frontend,backend)")
	check(err == nil, "selector: %v", err)
	selectorLists := scaled(scanLookups*100, 10)
	t = startTimer()
	n = 0
	for i := range selectorLists {
		pods, _ := lister.Pods(nsNames[i%namespaces]).List(sel)
		n += len(pods)
	}
	nsListOps, nsListCPUOps := rate(selectorLists, t.span())
	check(n > 0, "selector matched nothing")

	update := updateAll(func(pods []*corev1.Pod) span {
		t := startTimer()
		for _, p := range pods {
			_ = indexer.Update(p)
		}
		return t.span()
	})
	check(len(indexer.ListKeys()) == storeObjects, "store size after update")
	// Pods on node-0000 (i % 1000 == 0) moved to node-0001; the empty value is gone.
	moved, _ := indexer.ByIndex(nodeIndex, "node-0001")
	check(len(moved) == 2*storeObjects/nodes, "node-0001 holds %d", len(moved))
	left, _ := indexer.ByIndex(nodeIndex, "node-0000")
	check(len(left) == 0, "node-0000 holds %d", len(left))
	// Every node whose number is a multiple of 10 lost all its pods.
	values := indexer.ListIndexFuncValues(nodeIndex)
	check(len(values) == nodes-nodes/10, "%d node values", len(values))

	concOps, concCPUOps := concurrent(func(i int) bool {
		_, ok, _ := indexer.GetByKey(keys[shuffled(i%storeObjects)])
		return ok
	})

	return record{
		"workload": "store", "impl": "client-go", "objects": storeObjects,
		"insert_ms": round2(millis(insert.wall)), "insert_cpu_ms": round2(millis(insert.cpu)),
		"get_ops_per_s": getOps, "get_ops_per_cpu_s": getCPUOps,
		// GetByKey returns a pointer and touches nothing: it already lends, so the Rust side's
		// lending-read rows compare against the same figures.
		"get_lend_ops_per_s": getOps, "get_lend_ops_per_cpu_s": getCPUOps,
		"list_all_ms": round2(millis(list.wall) / lists), "list_all_cpu_ms": round2(millis(list.cpu) / lists),
		"by_index_namespace_ops_per_s": byNsOps, "by_index_namespace_ops_per_cpu_s": byNsCPUOps,
		"by_index_namespace_lookups": nsLookups, "by_index_node_lookups": nodeLookups,
		"namespaced_list_selector_lists": selectorLists,
		"by_index_node_ops_per_s":        byNodeOps, "by_index_node_ops_per_cpu_s": byNodeCPUOps,
		"namespaced_list_selector_ops_per_s": nsListOps, "namespaced_list_selector_ops_per_cpu_s": nsListCPUOps,
		"update_ms": round2(millis(update.wall)), "update_cpu_ms": round2(millis(update.cpu)),
		// Go frees replaced objects in its garbage collector, on its own threads: the Rust
		// side's deferred-drop rows compare against the same update figures.
		"update_deferred_ms": round2(millis(update.wall)), "update_deferred_cpu_ms": round2(millis(update.cpu)),
		"update_deferred_writer_cpu_ms": round2(millis(update.cpu)),
		"concurrent_get_ops_per_s":      concOps, "concurrent_get_ops_per_cpu_s": concCPUOps,
		"concurrent_get_lend_ops_per_s": concOps, "concurrent_get_lend_ops_per_cpu_s": concCPUOps,
		"concurrent_get_threads":   threads(),
		"bytes_per_object":         bytesPerObject,
		"peak_rss_after_insert_kb": peakAfterInsert,
		"peak_rss_kb":              peakRSSKB(),
		"cpu_note":                 "process CPU (includes the garbage collector's threads)",
	}
}

// storePodsOnly is the baseline: the pods alone in a slice, no store.
func storePodsOnly() record {
	all := make([]*corev1.Pod, 0, storeObjects)
	_, bytesPerObject := fill(func(pods []*corev1.Pod) span {
		all = append(all, pods...)
		return span{}
	})
	check(len(all) == storeObjects, "baseline holds %d", len(all))
	r := record{
		"workload": "store", "impl": "client-go baseline: []*v1.Pod (objects only)",
		"objects": storeObjects, "bytes_per_object": bytesPerObject, "peak_rss_kb": peakRSSKB(),
	}
	runtime.KeepAlive(all)
	return r
}

// concurrent runs threads() goroutines doing lookups() gets each: (aggregate ops per wall
// second, ops per process CPU second).
func concurrent(get func(int) bool) (float64, float64) {
	t := startTimer()
	found := make([]int, threads())
	var wg sync.WaitGroup
	for th := range threads() {
		wg.Go(func() {
			for i := range lookups() {
				if get(i + th*31) {
					found[th]++
				}
			}
		})
	}
	wg.Wait()
	s := t.span()
	total := 0
	for _, f := range found {
		total += f
	}
	check(total == lookups()*threads(), "concurrent found %d", total)
	return rate(lookups()*threads(), s)
}
