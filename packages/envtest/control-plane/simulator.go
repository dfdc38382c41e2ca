package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
)

// The simulator stands in for kubelets (what kwok's "fast" stages do):
//   - keeps --nodes Nodes (converge-node-0..N-1) existing and Ready;
//   - binds every unscheduled pod (schedulerName default-scheduler) to one of
//     them with pods/binding (round-robin among nodes matching nodeSelector);
//   - marks bound pods Running and Ready with a unique pod IP (10.244.0.0/16),
//     all conditions True and every container running;
//   - force-deletes (grace period 0) pods that have a deletionTimestamp.
//
// Failure pattern: a pod any of whose containers uses an image whose tag
// starts with "fail" (example.com/app:fail, app:fail-2) is bound and Running
// but that container stays Waiting (reason ErrImagePull), so the pod never
// becomes Ready and a Deployment eventually reports ProgressDeadlineExceeded.

const simulatorUserAgent = "converge-simulator"

// FailImageTagPrefix marks images that the simulator never lets become ready.
const failImageTagPrefix = "fail"

type simKey struct {
	node      bool
	namespace string
	name      string
}

type simulator struct {
	client     kubernetes.Interface
	nodeNames  []string
	nodeIPs    map[string]string
	pods       corelisters.PodLister
	nodes      corelisters.NodeLister
	queue      workqueue.TypedRateLimitingInterface[simKey]
	mu         sync.Mutex
	ipByUID    map[types.UID]uint32
	uidByIP    map[uint32]types.UID
	nextIP     uint32
	roundRobin int
}

func runSimulator(args []string) error {
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the API server (required)")
	nodes := fs.Int("nodes", 1, "number of simulated nodes")
	workers := fs.Int("workers", 4, "concurrent pod workers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return fmt.Errorf("--kubeconfig is required")
	}
	if *nodes < 1 {
		return fmt.Errorf("--nodes must be at least 1")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = simulatorUserAgent
	cfg.QPS = 500
	cfg.Burst = 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	s := &simulator{
		client:  client,
		nodeIPs: map[string]string{},
		queue: workqueue.NewTypedRateLimitingQueue[simKey](
			workqueue.NewTypedItemExponentialFailureRateLimiter[simKey](5*time.Millisecond, 5*time.Second)),
		ipByUID: map[types.UID]uint32{},
		uidByIP: map[uint32]types.UID{},
		nextIP:  1,
	}
	for i := 0; i < *nodes; i++ {
		name := fmt.Sprintf("converge-node-%d", i)
		s.nodeNames = append(s.nodeNames, name)
		s.nodeIPs[name] = fmt.Sprintf("10.1.0.%d", i+10)
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods()
	nodeInformer := factory.Core().V1().Nodes()
	s.pods = podInformer.Lister()
	s.nodes = nodeInformer.Lister()
	enqueuePod := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok {
			s.queue.Add(simKey{namespace: p.Namespace, name: p.Name})
		}
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueuePod,
		UpdateFunc: func(_, obj any) { enqueuePod(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				s.releaseIP(p.UID)
			}
		},
	}); err != nil {
		return err
	}
	enqueueNode := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if n, ok := obj.(*v1.Node); ok && s.isOurs(n.Name) {
			s.queue.Add(simKey{node: true, name: n.Name})
		}
	}
	if _, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueNode,
		UpdateFunc: func(_, obj any) { enqueueNode(obj) },
		DeleteFunc: enqueueNode,
	}); err != nil {
		return err
	}

	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cache for %v did not sync", typ)
		}
	}
	for _, name := range s.nodeNames {
		if err := s.syncNode(ctx, name); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
	}
	fmt.Printf("simulator ready (%d nodes)\n", len(s.nodeNames))

	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

func (s *simulator) isOurs(node string) bool {
	_, ok := s.nodeIPs[node]
	return ok
}

func (s *simulator) processNext(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	var err error
	if key.node {
		err = s.syncNode(ctx, key.name)
	} else {
		err = s.syncPod(ctx, key.namespace, key.name)
	}
	if err != nil && ctx.Err() == nil {
		if !apierrors.IsConflict(err) {
			fmt.Fprintf(os.Stderr, "simulator: %s/%s: %v\n", key.namespace, key.name, err)
		}
		s.queue.AddRateLimited(key)
		return true
	}
	s.queue.Forget(key)
	return true
}

// ---- nodes ----

func (s *simulator) syncNode(ctx context.Context, name string) error {
	nodes := s.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err = nodes.Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": "simulated",
				"converge.dev/simulated":           "true",
			},
		}}, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	if !nodeReady(node) {
		n := node.DeepCopy()
		n.Status = s.nodeStatus(name)
		if node, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	// Admission taints new nodes not-ready; nobody else will lift it here.
	if hasTaint(node, v1.TaintNodeNotReady) || hasTaint(node, v1.TaintNodeUnreachable) {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var keep []v1.Taint
			for _, t := range cur.Spec.Taints {
				if t.Key != v1.TaintNodeNotReady && t.Key != v1.TaintNodeUnreachable {
					keep = append(keep, t)
				}
			}
			cur.Spec.Taints = keep
			_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	return nil
}

func hasTaint(n *v1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func nodeReady(n *v1.Node) bool {
	if len(n.Status.Addresses) == 0 {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func (s *simulator) nodeStatus(name string) v1.NodeStatus {
	now := metav1.Now()
	res := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("32"),
		v1.ResourceMemory:           resource.MustParse("256Gi"),
		v1.ResourcePods:             resource.MustParse("1000"),
		v1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	cond := func(t v1.NodeConditionType, st v1.ConditionStatus, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return v1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Phase:       v1.NodeRunning,
		Conditions: []v1.NodeCondition{
			cond(v1.NodeReady, v1.ConditionTrue, "KubeletReady", "kubelet is posting ready status (simulated)"),
			cond(v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory", "simulated"),
			cond(v1.NodeDiskPressure, v1.ConditionFalse, "KubeletHasNoDiskPressure", "simulated"),
			cond(v1.NodePIDPressure, v1.ConditionFalse, "KubeletHasSufficientPID", "simulated"),
			cond(v1.NodeNetworkUnavailable, v1.ConditionFalse, "RouteCreated", "simulated"),
		},
		Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: s.nodeIPs[name]},
			{Type: v1.NodeHostName, Address: name},
		},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
		NodeInfo: v1.NodeSystemInfo{
			MachineID:               name,
			SystemUUID:              name,
			BootID:                  name,
			KernelVersion:           "simulated",
			OSImage:                 "Converge simulated node",
			ContainerRuntimeVersion: "converge-simulator://1.0.0",
			KubeletVersion:          "v1.36.3",
			KubeProxyVersion:        "",
			OperatingSystem:         "linux",
			Architecture:            "amd64",
		},
	}
}

// ---- pods ----

func (s *simulator) syncPod(ctx context.Context, namespace, name string) error {
	pod, err := s.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	podsAPI := s.client.CoreV1().Pods(namespace)

	if pod.DeletionTimestamp != nil {
		if pod.Spec.NodeName != "" && !s.isOurs(pod.Spec.NodeName) {
			return nil
		}
		if pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
			return nil // already force-deleted; waiting for finalizers
		}
		zero := int64(0)
		uid := pod.UID
		err := podsAPI.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
			Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return nil
	}
	if pod.Spec.NodeName == "" {
		if pod.Spec.SchedulerName != "" && pod.Spec.SchedulerName != v1.DefaultSchedulerName {
			return nil
		}
		node := s.pickNode(pod)
		if node == "" {
			return nil // no node matches the pod's nodeSelector: stays Pending
		}
		err := podsAPI.Bind(ctx, &v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: pod.UID},
			Target:     v1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone, or bound meanwhile; the informer brings the next event
		}
		return err
	}
	if !s.isOurs(pod.Spec.NodeName) {
		return nil
	}
	desired := s.desiredStatus(pod)
	if equality.Semantic.DeepEqual(pod.Status, *desired) {
		return nil
	}
	updated := pod.DeepCopy()
	updated.Status = *desired
	_, err = podsAPI.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (s *simulator) pickNode(pod *v1.Pod) string {
	sel := labels.SelectorFromSet(pod.Spec.NodeSelector)
	var candidates []string
	for _, name := range s.nodeNames {
		n, err := s.nodes.Get(name)
		if err != nil {
			continue
		}
		if sel.Matches(labels.Set(n.Labels)) {
			candidates = append(candidates, name)
		}
	}
	if len(candidates) == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roundRobin++
	return candidates[s.roundRobin%len(candidates)]
}

// imageFails reports whether an image's tag starts with "fail".
func imageFails(image string) bool {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return strings.HasPrefix(last[i+1:], failImageTagPrefix)
	}
	return false
}

func (s *simulator) desiredStatus(pod *v1.Pod) *v1.PodStatus {
	st := pod.Status.DeepCopy()
	now := metav1.Now()
	hostIP := s.nodeIPs[pod.Spec.NodeName]
	st.Phase = v1.PodRunning
	st.HostIP = hostIP
	st.HostIPs = []v1.HostIP{{IP: hostIP}}
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		podIP = s.podIP(pod)
	}
	st.PodIP = podIP
	st.PodIPs = []v1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &now
	}

	allReady := true
	var statuses []v1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		want := v1.ContainerStatus{Name: c.Name, Image: c.Image, RestartCount: 0}
		if imageFails(c.Image) {
			allReady = false
			want.Ready = false
			want.Started = ptr(false)
			want.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
				Reason: "ErrImagePull",
				Message: fmt.Sprintf("simulated pull failure: the tag of image %q starts with %q",
					c.Image, failImageTagPrefix),
			}}
		} else {
			want.Ready = true
			want.Started = ptr(true)
			want.ImageID = c.Image
			want.ContainerID = fmt.Sprintf("converge://%s-%s", pod.UID, c.Name)
			want.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}
		}
		statuses = append(statuses, keepIfSame(st.ContainerStatuses, want))
	}
	st.ContainerStatuses = statuses

	var initStatuses []v1.ContainerStatus
	for _, c := range pod.Spec.InitContainers {
		want := v1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true,
			Started: ptr(false), ContainerID: fmt.Sprintf("converge://%s-%s", pod.UID, c.Name),
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}}
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			want.Started = ptr(true)
			want.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}
		}
		initStatuses = append(initStatuses, keepIfSame(st.InitContainerStatuses, want))
	}
	st.InitContainerStatuses = initStatuses

	condStatus := func(ok bool) v1.ConditionStatus {
		if ok {
			return v1.ConditionTrue
		}
		return v1.ConditionFalse
	}
	notReadyReason, notReadyMsg := "", ""
	if !allReady {
		notReadyReason = "ContainersNotReady"
		notReadyMsg = "containers with unready status (simulated image pull failure)"
	}
	st.Conditions = setCondition(st.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}, now)
	st.Conditions = setCondition(st.Conditions, v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}, now)
	st.Conditions = setCondition(st.Conditions, v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}, now)
	st.Conditions = setCondition(st.Conditions, v1.PodCondition{Type: v1.ContainersReady, Status: condStatus(allReady),
		Reason: notReadyReason, Message: notReadyMsg}, now)
	ready := allReady
	for _, g := range pod.Spec.ReadinessGates {
		found := false
		for _, c := range st.Conditions {
			if c.Type == g.ConditionType && c.Status == v1.ConditionTrue {
				found = true
			}
		}
		if !found {
			ready = false
			if notReadyReason == "" {
				notReadyReason, notReadyMsg = "ReadinessGatesNotReady", "unready readiness gates"
			}
		}
	}
	st.Conditions = setCondition(st.Conditions, v1.PodCondition{Type: v1.PodReady, Status: condStatus(ready),
		Reason: notReadyReason, Message: notReadyMsg}, now)
	return st
}

// keepIfSame returns the existing status for want.Name when it already says
// the same thing (so timestamps stay stable and no write is needed).
func keepIfSame(existing []v1.ContainerStatus, want v1.ContainerStatus) v1.ContainerStatus {
	for _, e := range existing {
		if e.Name != want.Name {
			continue
		}
		same := e.Image == want.Image && e.Ready == want.Ready &&
			(e.State.Running != nil) == (want.State.Running != nil) &&
			(e.State.Terminated != nil) == (want.State.Terminated != nil) &&
			(e.State.Waiting != nil) == (want.State.Waiting != nil) &&
			(e.State.Waiting == nil || e.State.Waiting.Reason == want.State.Waiting.Reason)
		if same {
			return e
		}
	}
	return want
}

func setCondition(conds []v1.PodCondition, c v1.PodCondition, now metav1.Time) []v1.PodCondition {
	for i, e := range conds {
		if e.Type != c.Type {
			continue
		}
		if e.Status == c.Status && e.Reason == c.Reason && e.Message == c.Message {
			return conds
		}
		c.LastTransitionTime = now
		if e.Status == c.Status {
			c.LastTransitionTime = e.LastTransitionTime
		}
		out := append([]v1.PodCondition(nil), conds...)
		out[i] = c
		return out
	}
	c.LastTransitionTime = now
	return append(conds, c)
}

// ---- pod IPs: unique addresses from 10.244.0.0/16 ----

func (s *simulator) podIP(pod *v1.Pod) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.ipByUID[pod.UID]; ok {
		return ipString(n)
	}
	// Keep an address the pod already has (simulator restarted).
	if ip := net.ParseIP(pod.Status.PodIP).To4(); ip != nil && ip[0] == 10 && ip[1] == 244 {
		n := binary.BigEndian.Uint32(ip) & 0xffff
		if owner, used := s.uidByIP[n]; !used || owner == pod.UID {
			s.ipByUID[pod.UID], s.uidByIP[n] = n, pod.UID
			return ipString(n)
		}
	}
	for i := 0; i < 0xfffe; i++ {
		n := s.nextIP
		s.nextIP++
		if s.nextIP >= 0xffff {
			s.nextIP = 1
		}
		if _, used := s.uidByIP[n]; !used && n&0xff != 0 && n&0xff != 0xff {
			s.ipByUID[pod.UID], s.uidByIP[n] = n, pod.UID
			return ipString(n)
		}
	}
	return "10.244.255.254" // pool exhausted (65k live pods); not expected locally
}

func (s *simulator) releaseIP(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.ipByUID[uid]; ok {
		delete(s.ipByUID, uid)
		delete(s.uidByIP, n)
	}
}

func ipString(n uint32) string { return fmt.Sprintf("10.244.%d.%d", n>>8, n&0xff) }

func ptr[T any](v T) *T { return &v }
