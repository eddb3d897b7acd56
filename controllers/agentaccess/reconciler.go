package agentaccess

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fastjobset/jobset/api/jobset/agentspec"
)

// CacheObjects are what the reconciler reads through the manager's cache:
// the agents' ServiceAccounts of every namespace, and its own Role and
// RoleBinding; nothing else of either kind.
func CacheObjects() map[client.Object]cache.ByObject {
	ours := cache.ByObject{
		Namespaces: map[string]cache.Config{agentspec.NodeLeaseNamespace: {}},
		Field:      fields.OneTermEqualSelector("metadata.name", Name),
	}
	return map[client.Object]cache.ByObject{
		&corev1.ServiceAccount{}: {Field: fields.OneTermEqualSelector("metadata.name", agentspec.ServiceAccountName)},
		&rbacv1.Role{}:           ours,
		&rbacv1.RoleBinding{}:    ours,
	}
}

// Reconciler keeps Role and Binding in kube-node-lease as the agents'
// ServiceAccounts say. Every change comes to the one request it knows:
// what it writes depends on all the ServiceAccounts at once.
type Reconciler struct {
	client client.Client
}

// NewReconciler returns a Reconciler that reads through c, the manager's
// cache configured with CacheObjects, and writes through it.
func NewReconciler(c client.Client) *Reconciler {
	return &Reconciler{client: c}
}

// request is the one request: the RoleBinding's name.
var request = reconcile.Request{NamespacedName: client.ObjectKey{Namespace: agentspec.NodeLeaseNamespace, Name: Name}}

// SetupWithManager reconciles when an agents' ServiceAccount comes or goes,
// and when someone changes or deletes the Role or the RoleBinding: the
// cache (CacheObjects) holds nothing else of those kinds.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toRequest := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{request}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("agent-node-lease-access").
		Watches(&corev1.ServiceAccount{}, toRequest).
		Watches(&rbacv1.Role{}, toRequest).
		Watches(&rbacv1.RoleBinding{}, toRequest).
		Complete(r)
}

// +kubebuilder:rbac:groups=core,resources=serviceaccounts,verbs=list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,namespace=kube-node-lease,resources=roles;rolebindings,verbs=get;list;watch;create;update;delete

// Reconcile writes the Role and the RoleBinding where they differ from
// what the ServiceAccounts ask.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var accounts corev1.ServiceAccountList
	if err := r.client.List(ctx, &accounts); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the agents' ServiceAccounts: %w", err)
	}
	if err := r.applyRole(ctx, Role()); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.applyBinding(ctx, Binding(accounts.Items))
}

func (r *Reconciler) applyRole(ctx context.Context, want *rbacv1.Role) error {
	var current rbacv1.Role
	if found, err := r.read(ctx, want, &current); !found || err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(current.Rules, want.Rules) && ours(&current) {
		return nil
	}
	current.Rules = want.Rules
	return r.update(ctx, &current)
}

func (r *Reconciler) applyBinding(ctx context.Context, want *rbacv1.RoleBinding) error {
	var current rbacv1.RoleBinding
	if found, err := r.read(ctx, want, &current); !found || err != nil {
		return err
	}
	if current.RoleRef != want.RoleRef {
		// No update may change a roleRef back: deleted, the RoleBinding
		// is created anew by the reconcile its deletion brings.
		if err := r.client.Delete(ctx, &current, client.Preconditions{UID: &current.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting RoleBinding %s, whose roleRef was changed: %w", client.ObjectKeyFromObject(want), err)
		}
		return nil
	}
	if apiequality.Semantic.DeepEqual(current.Subjects, want.Subjects) && ours(&current) {
		return nil
	}
	current.Subjects = want.Subjects
	return r.update(ctx, &current)
}

// read reads want's object into current, or creates want where there is
// none; found says whether it read one.
func (r *Reconciler) read(ctx context.Context, want, current client.Object) (found bool, err error) {
	key := client.ObjectKeyFromObject(want)
	err = r.client.Get(ctx, key, current)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("creating %T %s: %w", want, key, err)
		}
		ctrl.LoggerFrom(ctx).Info("Created the agents' access to their nodes' Leases", "object", key, "kind", fmt.Sprintf("%T", want))
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %T %s: %w", want, key, err)
	}
	return true, nil
}

// update writes current, labelled as the controller's.
func (r *Reconciler) update(ctx context.Context, current client.Object) error {
	labels := current.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, managedBy)
	current.SetLabels(labels)
	if err := r.client.Update(ctx, current); err != nil {
		return fmt.Errorf("updating %T %s: %w", current, client.ObjectKeyFromObject(current), err)
	}
	ctrl.LoggerFrom(ctx).Info("Updated the agents' access to their nodes' Leases", "object", client.ObjectKeyFromObject(current), "kind", fmt.Sprintf("%T", current))
	return nil
}

// ours says whether o carries the controller's labels.
func ours(o client.Object) bool {
	for k, v := range managedBy {
		if o.GetLabels()[k] != v {
			return false
		}
	}
	return true
}
