// The Deployment and Service a Microservice should have, as controllerutil.CreateOrUpdate mutate
// functions, and where its rollout stands: the Go counterparts of Converge's
// packages/operators/src/operators/microservice/desired-state.ts and rollout.ts, with the same content.
//
// A mutate function sets only the fields the operator owns, on the object as read (or on an
// empty one before a create), and keeps everything the API server defaulted (probe timeouts,
// imagePullPolicy, clusterIP, …): CreateOrUpdate compares the result with what it read, so a
// converged child costs no write.
package main

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

var microserviceGVK = schema.GroupVersionKind{Group: "platform.example.io", Version: "v1", Kind: "Microservice"}

const (
	generationAnnotation = "platform.example.io/generation"
	handoverAnnotation   = "platform.example.io/handover-to"
	managedBy            = "converge"
	portName             = "http"
	sliceServiceIndex    = "serviceName"
)

// PlatformDefaults are Converge's defaultPlatformDefaults (packages/operators/src/operators/microservice/platform-defaults.ts).
type PlatformDefaults struct {
	Replicas      int32
	OtlpEndpoint  string
	ContainerName string
	Requests      corev1.ResourceList
	ReadinessPath string
	LivenessPath  string
}

var defaultPlatformDefaults = PlatformDefaults{
	Replicas:      2,
	OtlpEndpoint:  "http://otel-collector.observability.svc.cluster.local:4317",
	ContainerName: "app",
	Requests:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	ReadinessPath: "/health/ready",
	LivenessPath:  "/health/live",
}

// MicroserviceSpec is the part of the CR the operator reads.
type MicroserviceSpec struct {
	Image string
	Port  int32
}

// readSpec reads spec.container.image and spec.container.port (v1); problems are reported as InvalidSpec.
func readSpec(ms *unstructured.Unstructured) (MicroserviceSpec, []string) {
	var problems []string
	image, _, _ := unstructured.NestedString(ms.Object, "spec", "container", "image")
	if image == "" {
		problems = append(problems, "spec.container.image is required")
	}
	port, found, err := unstructured.NestedInt64(ms.Object, "spec", "container", "port")
	if !found || err != nil || port < 1 || port > 65535 {
		problems = append(problems, "spec.container.port must be an integer from 1 to 65535")
	}
	return MicroserviceSpec{Image: image, Port: int32(port)}, problems
}

func selectorLabels(name string) map[string]string { return map[string]string{"app": name} }

func workloadLabels(name string) map[string]string {
	return map[string]string{
		"app":                          name,
		"app.kubernetes.io/name":       name,
		"app.kubernetes.io/instance":   name,
		"app.kubernetes.io/managed-by": managedBy,
	}
}

// withLabels returns m with every entry of add set (other entries kept).
func withLabels(m, add map[string]string) map[string]string {
	if m == nil {
		m = make(map[string]string, len(add))
	}
	for k, v := range add {
		m[k] = v
	}
	return m
}

func httpProbe(current *corev1.Probe, path string, port int32) *corev1.Probe {
	if current == nil || current.HTTPGet == nil {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}}
	}
	p := current.DeepCopy()
	p.HTTPGet.Path = path
	p.HTTPGet.Port = intstr.FromInt32(port)
	return p
}

// mutateDeployment makes d carry the desired state of ms's Deployment.
func mutateDeployment(d *appsv1.Deployment, ms *unstructured.Unstructured, spec MicroserviceSpec, def PlatformDefaults, scheme *runtime.Scheme) error {
	name := ms.GetName()
	labels := workloadLabels(name)
	d.Labels = withLabels(d.Labels, labels)
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[generationAnnotation] = strconv.FormatInt(ms.GetGeneration(), 10)
	if err := controllerutil.SetControllerReference(ms, d, scheme); err != nil {
		return err
	}
	d.Spec.Replicas = ptr.To(def.Replicas)
	if d.CreationTimestamp.IsZero() {
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(name)} // immutable after create
	}
	d.Spec.Template.Labels = withLabels(d.Spec.Template.Labels, labels)
	pod := &d.Spec.Template.Spec
	i := -1
	for j := range pod.Containers {
		if pod.Containers[j].Name == def.ContainerName {
			i = j
		}
	}
	if i < 0 {
		pod.Containers = append(pod.Containers, corev1.Container{Name: def.ContainerName})
		i = len(pod.Containers) - 1
	}
	c := &pod.Containers[i]
	c.Image = spec.Image
	c.Ports = []corev1.ContainerPort{{Name: portName, ContainerPort: spec.Port, Protocol: corev1.ProtocolTCP}}
	c.Env = []corev1.EnvVar{
		{Name: "ASPNETCORE_URLS", Value: "http://+:" + strconv.Itoa(int(spec.Port))},
		{Name: "OTEL_SERVICE_NAME", Value: name},
		{Name: "OTEL_SERVICE_VERSION", Value: spec.Image},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: def.OtlpEndpoint},
	}
	c.ReadinessProbe = httpProbe(c.ReadinessProbe, def.ReadinessPath, spec.Port)
	c.LivenessProbe = httpProbe(c.LivenessProbe, def.LivenessPath, spec.Port)
	c.Resources.Requests = def.Requests.DeepCopy()
	return nil
}

// mutateService makes s carry the desired state of ms's Service (no generation stamp, as in Converge).
func mutateService(s *corev1.Service, ms *unstructured.Unstructured, spec MicroserviceSpec, scheme *runtime.Scheme) error {
	name := ms.GetName()
	s.Labels = withLabels(s.Labels, workloadLabels(name))
	if err := controllerutil.SetControllerReference(ms, s, scheme); err != nil {
		return err
	}
	s.Spec.Type = corev1.ServiceTypeClusterIP
	s.Spec.Selector = selectorLabels(name)
	s.Spec.Ports = []corev1.ServicePort{{Name: portName, Protocol: corev1.ProtocolTCP, Port: spec.Port, TargetPort: intstr.FromInt32(spec.Port)}}
	return nil
}

// RolloutState is where a rollout stands (rollout.ts).
type RolloutState string

const (
	Available         RolloutState = "Available"
	InProgress        RolloutState = "InProgress"
	Stalled           RolloutState = "Stalled"
	EndpointsNotReady RolloutState = "EndpointsNotReady"
)

// RolloutSummary is status.rollout.
type RolloutSummary struct {
	Replicas          int32 `json:"replicas"`
	UpdatedReplicas   int32 `json:"updatedReplicas"`
	AvailableReplicas int32 `json:"availableReplicas"`
	ReadyEndpoints    int32 `json:"readyEndpoints"`
}

// assessRollout is Converge's assessRollout: strict, from the Deployment as last seen, the ready
// endpoints of its Service and the CR generation the Deployment must have been written for.
func assessRollout(d *appsv1.Deployment, crGeneration int64, readyEndpoints int32) (RolloutState, string, RolloutSummary) {
	desired := ptr.Deref(d.Spec.Replicas, 1)
	st := d.Status
	summary := RolloutSummary{Replicas: desired, UpdatedReplicas: st.UpdatedReplicas, AvailableReplicas: st.AvailableReplicas, ReadyEndpoints: readyEndpoints}
	stamped := d.Annotations[generationAnnotation] == strconv.FormatInt(crGeneration, 10)
	gen := d.Generation
	if gen == 0 {
		gen = 1
	}
	if !stamped || st.ObservedGeneration < gen {
		return InProgress, "waiting for the Deployment controller to observe the new spec", summary
	}
	for _, c := range st.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			msg := c.Message
			if msg == "" {
				msg = "progress deadline exceeded"
			}
			return Stalled, "rollout stalled: " + msg, summary
		}
	}
	if st.UpdatedReplicas != desired || st.AvailableReplicas != desired || st.Replicas != desired || st.UnavailableReplicas != 0 {
		return InProgress, "rolling out: " + strconv.Itoa(int(st.UpdatedReplicas)) + "/" + strconv.Itoa(int(desired)) + " updated, " +
			strconv.Itoa(int(st.AvailableReplicas)) + "/" + strconv.Itoa(int(desired)) + " available", summary
	}
	if readyEndpoints < 1 {
		return EndpointsNotReady, "pods are available but the Service has no ready endpoint yet", summary
	}
	return Available, strconv.Itoa(int(desired)) + "/" + strconv.Itoa(int(desired)) + " replicas available, " + strconv.Itoa(int(readyEndpoints)) + " ready endpoints", summary
}
