// The Microservice reconciler of the controller-runtime comparison operator: the steps of
// Converge's packages/operators/src/operators/microservice/reconciler.ts in controller-runtime's idiom.
//
//  1. Skip objects that are gone or being deleted (garbage collection removes the children).
//  2. Invalid spec → status Failed/InvalidSpec, no retry (reconcile.TerminalError).
//  3. A new generation → status Accepted (and the "Accepted …" log line).
//  4. Ownership of both children before touching either: a child controlled by anything else →
//     Failed/OwnershipConflict (a child of a deleted Microservice of the same name is waited
//     for); an unowned child is adopted only with the handover annotation naming this CR.
//  5. controllerutil.CreateOrUpdate for the Deployment and the Service (no write when converged).
//  6. Status ResourcesApplied with Ready/Progressing/Stalled for this generation, written only
//     when it differs from the status read, as a merge patch to the resourceVersion read (a
//     Conflict is returned, and controller-runtime requeues with backoff).
//
// Not ported: Converge's Events, its live owner-existence read before re-creating a child, and
// its periodic 10 s check (controller-runtime's default SyncPeriod, 10 h, is kept).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MicroserviceStatus is the CR's status, as Converge writes it.
type MicroserviceStatus struct {
	Phase              string             `json:"phase,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Reason             string             `json:"reason,omitempty"`
	Message            string             `json:"message,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ManagedResources   *ManagedResources  `json:"managedResources,omitempty"`
	Rollout            *RolloutSummary    `json:"rollout,omitempty"`
}

// ManagedResources is status.managedResources.
type ManagedResources struct {
	Deployment string `json:"deployment,omitempty"`
	Service    string `json:"service,omitempty"`
}

// MicroserviceReconciler reconciles platform.example.io/v1 Microservices.
type MicroserviceReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Defaults PlatformDefaults
}

type cond struct{ typ, status, reason, message string }

func (r *MicroserviceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	ms := newMicroservice()
	if err := r.Get(ctx, req.NamespacedName, ms); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ms.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	generation := ms.GetGeneration()
	current, err := readStatus(ms)
	if err != nil {
		return ctrl.Result{}, err
	}
	spec, problems := readSpec(ms)
	if len(problems) > 0 {
		return r.fail(ctx, ms, current, "InvalidSpec", strings.Join(problems, "; "))
	}

	if current.ObservedGeneration != generation {
		log.Info(fmt.Sprintf("Accepted %s: image=%s port=%d", req.NamespacedName, spec.Image, spec.Port))
		accepted := MicroserviceStatus{
			Phase:              "Accepted",
			ObservedGeneration: generation,
			Conditions: withConditions(current.Conditions, generation,
				cond{"Ready", "False", "RolloutInProgress", "spec accepted; applying resources"},
				cond{"Progressing", "True", "RolloutInProgress", "spec accepted; applying resources"},
				cond{"Stalled", "False", "NotStalled", ""}),
		}
		if err := r.writeStatus(ctx, ms, current, accepted); err != nil {
			return ctrl.Result{}, err
		}
		current = accepted
	}

	// Ownership of both children is settled before either is touched.
	deployment := &appsv1.Deployment{}
	service := &corev1.Service{}
	for _, child := range []client.Object{deployment, service} {
		if err := r.Get(ctx, req.NamespacedName, child); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return ctrl.Result{}, err
		}
		what := fmt.Sprintf("%T %s", child, req.NamespacedName)
		ref := metav1.GetControllerOf(child)
		switch {
		case ref != nil && ref.UID == ms.GetUID():
		case ref != nil && ref.Kind == microserviceGVK.Kind && ref.Name == ms.GetName():
			log.Info(what + " belongs to a deleted Microservice of the same name; waiting for it to be collected")
			return ctrl.Result{RequeueAfter: time.Second}, nil
		case ref != nil:
			return r.fail(ctx, ms, current, "OwnershipConflict", fmt.Sprintf("%s exists and is controlled by %s %s; it will not be modified", what, ref.Kind, ref.Name))
		case child.GetAnnotations()[handoverAnnotation] != ms.GetName():
			return r.fail(ctx, ms, current, "OwnershipConflict", fmt.Sprintf("%s exists and has no controller; annotate it with %s=%s to hand it over", what, handoverAnnotation, ms.GetName()))
		}
	}

	deployment = &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, deployment, func() error {
		return mutateDeployment(deployment, ms, spec, r.Defaults, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		log.Info("Deployment " + string(op))
	}
	service = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace}}
	op, err = controllerutil.CreateOrUpdate(ctx, r.Client, service, func() error {
		return mutateService(service, ms, spec, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		log.Info("Service " + string(op))
	}

	ready, err := r.readyEndpoints(ctx, req.Namespace, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	state, message, summary := assessRollout(deployment, generation, ready)
	readyCond := cond{"Ready", "False", map[RolloutState]string{InProgress: "RolloutInProgress", Stalled: "RolloutStalled", EndpointsNotReady: "EndpointsNotReady"}[state], message}
	progressing := cond{"Progressing", "False", "RolloutComplete", message}
	stalled := cond{"Stalled", "False", "NotStalled", ""}
	switch state {
	case Available:
		readyCond = cond{"Ready", "True", "Available", message}
	case InProgress:
		progressing = cond{"Progressing", "True", "RolloutInProgress", message}
	case Stalled:
		progressing = cond{"Progressing", "False", "RolloutStalled", message}
		stalled = cond{"Stalled", "True", "RolloutStalled", message}
	}
	applied := MicroserviceStatus{
		Phase:              "ResourcesApplied",
		ObservedGeneration: generation,
		Conditions:         withConditions(current.Conditions, generation, readyCond, progressing, stalled),
		ManagedResources:   &ManagedResources{Deployment: req.Name, Service: req.Name},
		Rollout:            &summary,
	}
	return ctrl.Result{}, r.writeStatus(ctx, ms, current, applied)
}

// fail reports a failure that waits for a spec change: status Failed, no retry.
func (r *MicroserviceReconciler) fail(ctx context.Context, ms *unstructured.Unstructured, current MicroserviceStatus, reason, message string) (ctrl.Result, error) {
	generation := ms.GetGeneration()
	failed := MicroserviceStatus{
		Phase:              "Failed",
		ObservedGeneration: generation,
		Reason:             reason,
		Message:            message,
		Conditions: withConditions(current.Conditions, generation,
			cond{"Ready", "False", reason, message}, cond{"Progressing", "False", reason, message}, cond{"Stalled", "True", reason, message}),
	}
	if err := r.writeStatus(ctx, ms, current, failed); err != nil {
		return ctrl.Result{}, err
	}
	logf.FromContext(ctx).Info(message, "reason", reason)
	return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("%s: %s", reason, message))
}

// writeStatus writes next unless it equals current; on success ms holds the object written.
func (r *MicroserviceReconciler) writeStatus(ctx context.Context, ms *unstructured.Unstructured, current, next MicroserviceStatus) error {
	if sameJSON(current, next) {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&next)
	if err != nil {
		return err
	}
	// A JSON merge patch of the status to the very version read, as Converge's patchStatus sends
	// it: a stale cache shows up as a Conflict, returned, and the request is retried.
	before := ms.DeepCopy()
	ms.Object["status"] = m
	return r.Status().Patch(ctx, ms, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

func (r *MicroserviceReconciler) readyEndpoints(ctx context.Context, namespace, service string) (int32, error) {
	var slices discoveryv1.EndpointSliceList
	if err := r.List(ctx, &slices, client.InNamespace(namespace), client.MatchingFields{sliceServiceIndex: service}); err != nil {
		return 0, err
	}
	var n int32
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if (e.Conditions.Ready == nil || *e.Conditions.Ready) && len(e.Addresses) > 0 {
				n++
			}
		}
	}
	return n, nil
}

func readStatus(ms *unstructured.Unstructured) (MicroserviceStatus, error) {
	var s MicroserviceStatus
	m, found, err := unstructured.NestedMap(ms.Object, "status")
	if err != nil || !found {
		return s, err
	}
	return s, runtime.DefaultUnstructuredConverter.FromUnstructured(m, &s)
}

// withConditions sets each condition (lastTransitionTime moves only when the status changes).
func withConditions(existing []metav1.Condition, generation int64, conds ...cond) []metav1.Condition {
	out := append([]metav1.Condition(nil), existing...)
	for _, c := range conds {
		meta.SetStatusCondition(&out, metav1.Condition{Type: c.typ, Status: metav1.ConditionStatus(c.status), Reason: c.reason, Message: c.message, ObservedGeneration: generation})
	}
	return out
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
