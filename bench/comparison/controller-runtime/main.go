// A controller-runtime (v0.25) implementation of the Converge Microservice operator's reconcile,
// for `npm run bench -- --scenarios compare` only: the benchmark runs it next to Converge, the
// seed's Kopf operator and a plain client, on the same control plane and the same Microservices.
//
// What it does is what Converge does (README, "How the Microservice operator behaves"): for each
// platform.example.io/v1 Microservice (read as unstructured), a Deployment and a Service
// with the same content (desired.go), owned by the Microservice as controller; status Accepted
// when a new generation is seen, then ResourcesApplied with observedGeneration and
// Ready/Progressing/Stalled conditions (Ready when the Deployment is available for this
// generation and the Service has a ready endpoint), written only when it changes. Children are
// written with controllerutil.CreateOrUpdate and mutate functions that set only the fields the
// operator owns, so a converged object costs zero writes.
//
// It is written the way a kubebuilder project would write it (Manager, For/Owns/Watches, the
// cache-backed client), with controller-runtime's defaults unless a flag says otherwise:
//
//	bench-cr --kubeconfig <path> --namespace <ns> [--workers 4] [--qps N --burst N [--shared-limiter]] [--metrics-bind-address 0]
//
// --qps left out keeps controller-runtime's default: config.GetConfig sets rest.Config.QPS = -1,
// i.e. no client-side rate limit (API Priority and Fairness is relied upon). --qps 0 also means
// no limit. --qps N > 0 sets rest.Config.QPS/Burst, which client-go turns into one token bucket
// per REST client, i.e. per kind in controller-runtime; --shared-limiter gives every kind one
// shared bucket instead. Prints one line to stdout once the manager is built and about to start.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// UserAgent of every request, so the benchmark can count them in the audit log.
const userAgent = "bench-controller-runtime/0.1"

func main() {
	var namespace, qpsFlag, metricsAddr string
	var workers, burst int
	var sharedLimiter bool
	// --kubeconfig is registered by controller-runtime's config package (ctrl.GetConfig reads it).
	flag.StringVar(&namespace, "namespace", "", "the only namespace to watch (required)")
	flag.IntVar(&workers, "workers", 4, "MaxConcurrentReconciles")
	flag.StringVar(&qpsFlag, "qps", "", "client-side limit in requests/s (unset: controller-runtime's default, no limit; 0: no limit)")
	flag.IntVar(&burst, "burst", 0, "burst of the client-side limit (with --qps; default 2 × qps)")
	flag.BoolVar(&sharedLimiter, "shared-limiter", false, "one token bucket for all kinds instead of client-go's one per REST client")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "metrics endpoint address; 0 disables it")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(os.Stderr)))
	log := ctrl.Log.WithName("setup")
	if namespace == "" {
		fmt.Fprintln(os.Stderr, "--namespace is required")
		os.Exit(2)
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "cannot load the kubeconfig")
		os.Exit(1)
	}
	cfg.UserAgent = userAgent
	limit := "controller-runtime default (rest.Config.QPS=" + strconv.FormatFloat(float64(cfg.QPS), 'f', -1, 32) + ")"
	if qpsFlag != "" {
		qps, err := strconv.ParseFloat(qpsFlag, 32)
		if err != nil || qps < 0 {
			fmt.Fprintf(os.Stderr, "--qps must be a number ≥ 0, got %q\n", qpsFlag)
			os.Exit(2)
		}
		if qps == 0 {
			cfg.QPS = -1 // client-go: a negative QPS means no rate limiter
			limit = "none"
		} else {
			if burst <= 0 {
				burst = int(2 * qps)
			}
			cfg.QPS, cfg.Burst = float32(qps), burst
			limit = fmt.Sprintf("%g/s burst %d per kind", qps, burst)
			if sharedLimiter {
				cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst)
				limit = fmt.Sprintf("%g/s burst %d shared by all kinds", qps, burst)
			}
		}
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		log.Error(err, "scheme")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		// Read the Microservices (unstructured) from the cache like the typed children; by
		// default controller-runtime's client reads unstructured objects live from the API server.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		log.Error(err, "cannot build the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &discoveryv1.EndpointSlice{}, sliceServiceIndex, func(o client.Object) []string {
		if s := o.GetLabels()[discoveryv1.LabelServiceName]; s != "" {
			return []string{s}
		}
		return nil
	}); err != nil {
		log.Error(err, "cannot index EndpointSlices")
		os.Exit(1)
	}
	r := &MicroserviceReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Defaults: defaultPlatformDefaults}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("microservice").
		For(newMicroservice()).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(endpointSliceToMicroservice)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	if err != nil {
		log.Error(err, "cannot build the controller")
		os.Exit(1)
	}
	fmt.Printf("bench-controller-runtime started: namespace=%s workers=%d client-limit=%s pid=%d\n", namespace, workers, limit, os.Getpid())
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func newMicroservice() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(microserviceGVK)
	return u
}

// endpointSliceToMicroservice maps an EndpointSlice to the Microservice of the same name as its
// Service (the kubernetes.io/service-name label).
func endpointSliceToMicroservice(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[discoveryv1.LabelServiceName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}
