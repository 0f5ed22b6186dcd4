// etcd built from its server module (Debian ships 3.4, below what Kubernetes 1.34
// recommends).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
