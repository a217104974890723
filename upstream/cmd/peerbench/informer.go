package main

import (
	"flag"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	clientfeatures "k8s.io/client-go/features"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// runInformer is the client-go mode of informer/examples/informer_bench.rs: a pod SharedIndexInformer
// over every namespace (the one kube-controller-manager's informer factory makes, namespace
// index included) against the API server at --url, timed from its start until its cache holds
// every pod; then the same RSS readings as the Rust child.
func runInformer(args []string) error {
	baseline := procStatusKB("VmRSS")
	flags := flag.NewFlagSet("informer", flag.ContinueOnError)
	url := flags.String("url", "", "API server URL (plain HTTP)")
	pods := flags.Int("pods", 0, "pods the server holds")
	protobuf := flags.Bool("protobuf", false, "ask for protobuf, as kube-controller-manager does")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *url == "" || *pods <= 0 {
		return fmt.Errorf("usage: peerbench informer --url URL --pods N [--protobuf]")
	}
	served := &contentTypes{}
	config := &rest.Config{Host: *url, QPS: -1, WrapTransport: served.wrap}
	mode := "client-go"
	if *protobuf {
		config.ContentType = protobufType
		config.AcceptContentTypes = protobufType + ",application/json"
		mode = "client-go-protobuf"
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}

	start := time.Now()
	cpu0 := processCPU()
	informer := coreinformers.NewPodInformer(client, corev1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	stop := make(chan struct{})
	go informer.Run(stop)
	for !informer.HasSynced() {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	syncCPU := processCPU() - cpu0
	if n := len(informer.GetStore().ListKeys()); n < *pods {
		return fmt.Errorf("synced with %d pods, want %d", n, *pods)
	}
	time.Sleep(3 * time.Second)
	items := informer.GetStore().List()
	withManagedFields := 0
	for _, obj := range items {
		if len(obj.(*corev1.Pod).ManagedFields) > 0 {
			withManagedFields++
		}
	}
	record{
		"bench": "informer", "mode": mode, "impl": "client-go", "pods": len(items),
		"cached_with_managed_fields": withManagedFields, "namespaces": namespaces,
		"initial_sync_s":       math.Round(elapsed.Seconds()*1000) / 1000,
		"sync_cpu_ms":          syncCPU.Milliseconds(),
		"baseline_rss_mib":     mib(baseline),
		"peak_rss_mib":         mib(peakRSSKB()),
		"steady_rss_mib":       mib(procStatusKB("VmRSS")),
		"watch_list_client":    clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
		"served_content_types": served.list(),
	}.print()
	close(stop)
	return nil
}

func mib(kib int64) float64 { return math.Round(float64(kib)/1024*10) / 10 }

// contentTypes records the media types the server answered with, to tell whether protobuf
// was actually served.
type contentTypes struct {
	mu   sync.Mutex
	seen []string
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.add(resp.Header.Get("Content-Type"))
		}
		return resp, err
	})
}

func (c *contentTypes) add(t string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seen {
		if s == t {
			return
		}
	}
	c.seen = append(c.seen, t)
}

func (c *contentTypes) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
