package main

import (
	"encoding/json"
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// randomCases fills n PodTemplateSpecs at random. Values whose JSON form is not their Go layout
// get valid values: quantities of assorted sizes and suffixes, ints or strings, whole-second
// timestamps; managedFields stay unset (their raw bytes do not survive JSON).
func randomCases(n int, seed int64) []testCase {
	suffixes := []string{"", "m", "n", "u", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti", "Pi", "e3", "E"}
	f := randfill.NewWithSeed(seed).NilChance(.4).NumElements(0, 2).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			var s string
			switch c.Intn(3) {
			case 0:
				s = fmt.Sprintf("%d%s", c.Int63n(5000), suffixes[c.Intn(len(suffixes))])
			case 1:
				s = fmt.Sprintf("%d.%d%s", c.Intn(100), c.Intn(1000), suffixes[c.Intn(len(suffixes))])
			default:
				s = fmt.Sprintf("%d", c.Int63())
			}
			*q = resource.MustParse(s)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
		func(t *metav1.Time, c randfill.Continue) {
			if c.Bool() {
				*t = metav1.Time{}
			} else {
				*t = metav1.Unix(c.Int63n(4_000_000_000), 0)
			}
		},
		func(m *[]metav1.ManagedFieldsEntry, c randfill.Continue) { *m = nil },
	)
	r := rand.New(rand.NewSource(seed))
	cases := make([]testCase, n)
	for i := range cases {
		var t corev1.PodTemplateSpec
		f.Fill(&t)
		raw, err := json.Marshal(&t)
		if err != nil {
			fail("random case %d: %v", i, err)
		}
		cases[i] = testCase{Name: fmt.Sprintf("random seed %d #%d", seed, i), Template: raw}
		if c := r.Intn(3); c > 0 {
			count := int32(r.Intn(10))
			cases[i].CollisionCount = &count
		}
	}
	return cases
}
