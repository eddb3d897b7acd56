package leadership

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestFenceRefusesWritesAfterTheTerm: once a term ended, its client writes
// nothing, whichever verb or subresource; it still reads.
func TestFenceRefusesWritesAfterTheTerm(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	f := &fence{}
	c := f.wrap(fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).Build())
	if err := c.Create(ctx, cm.DeepCopy()); err != nil {
		t.Fatalf("create during the term: %v", err)
	}
	f.close()

	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Errorf("read after the term: %v", err)
	}
	for name, write := range map[string]func() error{
		"create": func() error {
			return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
		},
		"update":        func() error { return c.Update(ctx, got.DeepCopy()) },
		"patch":         func() error { return c.Patch(ctx, got.DeepCopy(), client.MergeFrom(got)) },
		"delete":        func() error { return c.Delete(ctx, got.DeepCopy()) },
		"delete all of": func() error { return c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("ns")) },
		"status update": func() error { return c.Status().Update(ctx, got.DeepCopy()) },
		"status patch":  func() error { return c.Status().Patch(ctx, got.DeepCopy(), client.MergeFrom(got)) },
	} {
		if err := write(); !errors.Is(err, ErrTermEnded) {
			t.Errorf("%s after the term: %v, want ErrTermEnded", name, err)
		}
	}
}

// TestNewLeavesTheConfigAlone: the config the controller's cache and API
// reader are built from keeps its user agent and no timeout, which would
// cut every watch; only the term's client for writes gets one, and the
// lease's own.
func TestNewLeavesTheConfigAlone(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", UserAgent: "jobset-controller/test"}
	c := Config{LeaseNamespace: "ns", LeaseName: "lease"}
	r, err := New(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UserAgent != "jobset-controller/test" || cfg.Timeout != 0 {
		t.Errorf("after New, the config has user agent %q and timeout %s; want them as they were", cfg.UserAgent, cfg.Timeout)
	}
	writes := r.c.writeConfig(cfg)
	if want := DefaultLeaseDuration - DefaultRenewDeadline; writes.Timeout != want || cfg.Timeout != 0 {
		t.Errorf("the term's client has a timeout of %s, want %s (the config given: %s, want none)", writes.Timeout, want, cfg.Timeout)
	}
}
