// Command peerbench runs the client-go side of `cargo xtask bench workqueue|store|informer`:
// the same workloads as the Rust examples (workqueue/examples/workqueue_bench.rs,
// store/examples/store_bench/, informer/examples/informer_bench.rs) on client-go v0.37.2, each printing one
// JSON line with the Rust side's field names plus "impl":"client-go".
//
// Usage:
//
//	peerbench workqueue <churn|delay|ratelimit>
//	peerbench store
//	peerbench informer --url URL --pods N [--protobuf]
//
// Every run uses GOMAXPROCS=2, as the Rust side uses a 2-thread tokio runtime.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
)

const usage = `usage:
  peerbench workqueue <churn|delay|ratelimit>
  peerbench store
  peerbench informer --url URL --pods N [--protobuf]
`

func main() {
	runtime.GOMAXPROCS(2)
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "workqueue":
		err = runWorkqueue(os.Args[2:])
	case "store":
		err = runStore(os.Args[2:])
	case "informer":
		err = runInformer(os.Args[2:])
	default:
		err = fmt.Errorf("unknown workload %q\n%s", os.Args[1], usage)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: %v\n", err)
		os.Exit(1)
	}
}

// record is one JSON line; encoding/json sorts map keys, as serde_json's json! does.
type record map[string]any

func (r record) print() {
	line, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: encoding result: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(line))
}
