// etcd built from go.etcd.io/etcd/server/v3 at the release pinned in ../versions.env (etcd's own main).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
