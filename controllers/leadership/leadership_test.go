package leadership

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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
