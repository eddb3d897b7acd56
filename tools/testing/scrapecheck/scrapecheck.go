// Package scrapecheck checks, against a real API server, that a metrics
// endpoint serves only scrapers the API server authenticates and
// authorizes, as install.yaml deploys it: a ServiceAccount's token bound to
// the shipped ClusterRole jobset-metrics-reader is served, a token without
// it is forbidden, and a scrape without a token is refused.
package scrapecheck

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/images/manifest"
	"github.com/fastjobset/jobset/tools/testing/framework"
)

// ReaderRolePath is the shipped ClusterRole a scraper is bound to, from
// the repository's root.
const ReaderRolePath = "monitoring/metrics-reader.yaml"

// Check scrapes url, the HTTPS metrics endpoint of a process that asks
// env's API server about its scrapers, three ways: without a token (401),
// with the token of a ServiceAccount of namespace that has no binding
// (403), and with the token of one bound to the shipped reader role (200,
// whose body must contain every string of want). It waits for the
// endpoint to serve, and for want, up to framework.Timeout.
func Check(ctx context.Context, t *testing.T, env *framework.Environment, namespace, url string, want ...string) {
	t.Helper()
	stranger := serviceAccountToken(ctx, t, env, namespace, "metrics-stranger")
	scraper := serviceAccountToken(ctx, t, env, namespace, "metrics-scraper")
	bindReaderRole(ctx, t, env, namespace, "metrics-scraper")

	// The endpoint's certificate is self-signed, as Prometheus is told by
	// the shipped ServiceMonitor (insecureSkipVerify): the token, not the
	// certificate, is what this checks.
	httpClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, see above
	}}
	var last string
	err := wait.PollUntilContextTimeout(ctx, framework.Interval, framework.Timeout, true, func(ctx context.Context) (bool, error) {
		code, body, err := scrape(ctx, httpClient, url, scraper)
		switch {
		case err != nil:
			last = err.Error()
			return false, nil
		case code != http.StatusOK:
			last = fmt.Sprintf("HTTP %d: %s", code, body)
			return false, nil
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				last = fmt.Sprintf("the metrics lack %q", w)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("a scraper bound to the ClusterRole in %s was never served %s: %s", ReaderRolePath, url, last)
	}

	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"a scrape without a token", "", http.StatusUnauthorized},
		{"a ServiceAccount without the reader role", stranger, http.StatusForbidden},
	} {
		code, body, err := scrape(ctx, httpClient, url, c.token)
		if err != nil {
			t.Fatalf("%s: %v", c.who, err)
		}
		if code != c.want {
			t.Errorf("%s got HTTP %d, want %d (%.200s)", c.who, code, c.want, body)
		}
	}
}

func scrape(ctx context.Context, c *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// serviceAccountToken creates a ServiceAccount and returns a token the API
// server issued for it, as the kubelet mounts into a Prometheus Pod.
func serviceAccountToken(ctx context.Context, t *testing.T, env *framework.Environment, namespace, name string) string {
	t.Helper()
	if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// bindReaderRole creates the shipped reader ClusterRole, unchanged, and
// binds the ServiceAccount to it, as docs/operations.md tells operators to
// bind their Prometheus.
func bindReaderRole(ctx context.Context, t *testing.T, env *framework.Environment, namespace, serviceAccount string) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := manifest.ReadObject(filepath.Join(root, ReaderRolePath), role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + serviceAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: serviceAccount}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
	}
	if err := env.Client.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating %s: %v", ReaderRolePath, err)
	}
	if err := env.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
}
