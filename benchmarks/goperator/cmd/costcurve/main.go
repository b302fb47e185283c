// costcurve is the controller-runtime side of benchmarks/bench_cost_curve.py: N controllers with a
// no-op reconciler, all For the same kind (ConfigMaps or BenchItems) in one namespace, sharing the
// manager's one informer. It reports on stdout when its cache synced and when every controller had
// reconciled every object once; the driver reads its RSS and CPU from /proc.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/pyop/goperator/api/v1"
)

func main() {
	var kind, namespace string
	var controllers, expect int
	var forceJSON bool
	flag.StringVar(&kind, "kind", "configmap", "configmap or benchitem")
	flag.StringVar(&namespace, "namespace", "default", "the namespace cached")
	flag.IntVar(&controllers, "controllers", 1, "controllers sharing the kind's informer")
	flag.IntVar(&expect, "expect", 0, "objects each controller reconciles before 'reconciled' is reported")
	flag.BoolVar(&forceJSON, "force-json", false, "JSON for built-in kinds too")
	flag.Parse()

	scheme := apiruntime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	cfg := ctrl.GetConfigOrDie()
	if forceJSON {
		cfg.ContentType = "application/json"
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
	})
	if err != nil {
		panic(err)
	}
	var reconciled atomic.Int64
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		reconciled.Add(1)
		return reconcile.Result{}, nil
	})
	for i := 0; i < controllers; i++ {
		var obj client.Object = &corev1.ConfigMap{}
		if kind == "benchitem" {
			obj = &benchv1.BenchItem{}
		}
		// kubebuilder's defaults otherwise: one worker per controller
		if err := ctrl.NewControllerManagedBy(mgr).Named(fmt.Sprintf("c%d", i)).For(obj).Complete(noop); err != nil {
			panic(err)
		}
	}
	ctx := ctrl.SetupSignalHandler()
	var obj client.Object = &corev1.ConfigMap{}
	if kind == "benchitem" {
		obj = &benchv1.BenchItem{}
	}
	// the controllers' informer, registered before the start so that WaitForCacheSync waits for it
	// (their sources would only ask for it once the manager starts them)
	if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
		panic(err)
	}
	start := time.Now()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			panic(err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		os.Exit(1)
	}
	fmt.Printf("synced %.6f\n", time.Since(start).Seconds())
	for reconciled.Load() < int64(expect*controllers) {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("reconciled %.6f\n", time.Since(start).Seconds())
	// the driver asks again (after a relist): how many reconciles so far; "gc" frees what Go can
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		if lines.Text() == "gc" {
			runtime.GC()
			debug.FreeOSMemory()
		}
		fmt.Printf("count %d\n", reconciled.Load())
	}
}
