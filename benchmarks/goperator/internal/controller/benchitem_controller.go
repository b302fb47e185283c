/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	benchv1 "github.com/pyop/goperator/api/v1"
)

// BenchItemReconciler does what benchmarks/bench_vs_go.py's pyop operator does: with Child, make sure
// a ConfigMap named after the item exists, controlled by it; then echo spec.value into
// status.observed (and status.handledAt, the wall time the reconcile started) with one merge patch.
type BenchItemReconciler struct {
	client.Client
	Scheme *runtime.Scheme
	// Child: own a ConfigMap per BenchItem (the benchmark's owned child).
	Child bool
	// MaxConcurrentReconciles: controller-runtime's default is 1.
	MaxConcurrentReconciles int
}

// +kubebuilder:rbac:groups=bench.pyop.io,resources=benchitems,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=bench.pyop.io,resources=benchitems/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=bench.pyop.io,resources=benchitems/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// Reconcile is level-triggered: nothing is written when the child exists and the status is current.
func (r *BenchItemReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	started := float64(time.Now().UnixNano()) / 1e9
	var item benchv1.BenchItem
	if err := r.Get(ctx, req.NamespacedName, &item); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.Child {
		var cm corev1.ConfigMap
		err := r.Get(ctx, req.NamespacedName, &cm)
		if apierrors.IsNotFound(err) {
			cm = corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace},
				Data:       map[string]string{"value": strconv.FormatInt(item.Spec.Value, 10)},
			}
			if err := controllerutil.SetControllerReference(&item, &cm, r.Scheme); err != nil {
				return ctrl.Result{}, err
			}
			if err := r.Create(ctx, &cm); err != nil && !apierrors.IsAlreadyExists(err) {
				return ctrl.Result{}, err
			}
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	if item.Status.Observed != nil && *item.Status.Observed == item.Spec.Value {
		return ctrl.Result{}, nil
	}
	patch, err := json.Marshal(map[string]any{
		"status": map[string]any{"observed": item.Spec.Value, "handledAt": started},
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Status().Patch(ctx, &item, client.RawPatch(types.MergePatchType, patch))
}

// SetupWithManager sets up the controller with the Manager. GenerationChangedPredicate on the
// BenchItem drops status-only updates, as pyop's for_() does by default (IgnoreStatusChanges): the
// controller's own status write does not reconcile the item again.
func (r *BenchItemReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&benchv1.BenchItem{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("benchitem")
	if r.Child {
		b = b.Owns(&corev1.ConfigMap{})
	}
	if r.MaxConcurrentReconciles > 0 {
		b = b.WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles})
	}
	return b.Complete(r)
}
