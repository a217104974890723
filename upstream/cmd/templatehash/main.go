// Command templatehash prints upstream's pod-template-hash (controller.ComputeHash, as the
// Deployment controller of the pinned kube-controller-manager computes it) for pod templates
// given as JSON, to make the golden fixture of the Rust hash.
//
// Input (stdin): a JSON array of {"name", "template", "collisionCount"} cases; "template" is a
// PodTemplateSpec as a client would send it (already defaulted: nothing here applies defaults).
// Each template goes the way a Deployment's template goes before the controller hashes it:
// decoded from JSON (the API server), encoded to protobuf (storage, and the controller's
// protobuf client), decoded from protobuf (the controller's informer), deep-copied (sync.go).
// Output (stdout): the same cases plus "stored", the template as the API server then serves it
// as JSON (what kcm reads), and "hash".
//
// With TEMPLATEHASH_DUMP=1 each case also carries "dump", the go-spew text that was hashed.
//
// With -random N (and -seed S) the cases are N random templates (every field of the Go types
// filled or left unset at random) instead.
//
// Usage (from upstream/): go run ./cmd/templatehash < cases.json > fixture.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/dump"
)

type testCase struct {
	Name           string          `json:"name"`
	Template       json.RawMessage `json:"template"`
	CollisionCount *int32          `json:"collisionCount"`
	Stored         json.RawMessage `json:"stored,omitempty"`
	Hash           string          `json:"hash,omitempty"`
	Dump           string          `json:"dump,omitempty"`
}

func main() {
	// A template's timestamps decode into time.Local, which go-spew prints field by field. Make
	// that the zone of a kube-controller-manager whose local zone is UTC by fallback (TZ=UTC or
	// no zone data; its images carry none), initialized as a running process's is.
	if err := os.Setenv("TZ", "UTC"); err != nil {
		fail("setting TZ: %v", err)
	}
	_ = time.Local.String()
	random := flag.Int("random", 0, "instead of reading cases, make this many random templates")
	seed := flag.Int64("seed", 1, "seed of -random")
	flag.Parse()
	var cases []testCase
	if *random > 0 {
		cases = randomCases(*random, *seed)
	} else if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fail("reading cases: %v", err)
	}
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		if seen[c.Name] {
			fail("duplicate case name %q", c.Name)
		}
		seen[c.Name] = true
		var sent corev1.PodTemplateSpec
		if err := json.Unmarshal(c.Template, &sent); err != nil {
			fail("case %q: decoding template: %v", c.Name, err)
		}
		wire, err := sent.Marshal()
		if err != nil {
			fail("case %q: protobuf encoding: %v", c.Name, err)
		}
		var stored corev1.PodTemplateSpec
		if err := stored.Unmarshal(wire); err != nil {
			fail("case %q: protobuf decoding: %v", c.Name, err)
		}
		template := *stored.DeepCopy()
		c.Hash = controller.ComputeHash(&template, c.CollisionCount)
		if os.Getenv("TEMPLATEHASH_DUMP") != "" {
			c.Dump = dump.ForHash(template)
		}
		if c.Stored, err = json.Marshal(&stored); err != nil {
			fail("case %q: JSON encoding: %v", c.Name, err)
		}
	}
	out, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		fail("encoding output: %v", err)
	}
	fmt.Println(string(out))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "templatehash: "+format+"\n", args...)
	os.Exit(1)
}
