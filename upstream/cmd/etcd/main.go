// Command etcd is etcd's server, built from the go.etcd.io/etcd/server/v3 module pinned in go.mod
// (etcd publishes no main package inside that module; this is the whole of its upstream main).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
