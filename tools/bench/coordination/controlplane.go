package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/fastjobset/jobset/images/manifest"
)

// The control plane both ways share, each component under the identity a
// cluster gives it, so that API Priority and Fairness classes its requests
// as it would there:
//
//   - kube-controller-manager's Job controller and garbage collector, as
//     system:kube-controller-manager with a ServiceAccount per controller
//     (--use-service-account-credentials, as kubeadm runs it): flow schema
//     kube-system-service-accounts, priority level workload-high;
//   - kube-scheduler as system:kube-scheduler: flow schema kube-scheduler,
//     workload-high;
//   - our controller as the ServiceAccount install.yaml gives it: with the
//     shipped flow schemas workload-high, else service-accounts,
//     workload-low, beside the agents.
//
// Their clients' own rate limits are lifted (QPS 1000, burst 2000), so
// that Recreate is bounded by the API server and not by a flag a cluster
// operator may raise: a lower bound of Recreate's time.

// Kinds of install.yaml that the benchmark applies: the controller's
// identity and RBAC, the agents' admission policy, and Priority and
// Fairness. Its Deployments, Services and webhooks stay out: the
// controller runs as a process here, and no webhook server runs.
var identityKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

var flowControlKinds = map[string]bool{"FlowSchema": true, "PriorityLevelConfiguration": true}

// The controller's ServiceAccount, as install.yaml names it.
const controllerNamespace, controllerName = "jobset-system", "jobset-controller"

// applyInstall applies install's identities, RBAC and admission policy,
// and with shippedAPF its flow schemas and priority level.
func (b *bench) applyInstall(ctx context.Context, install string, shippedAPF bool) error {
	objs, err := manifest.Read(install)
	if err != nil {
		return err
	}
	var kept []*unstructured.Unstructured
	controllerAccount := false
	for _, obj := range objs {
		kind := obj.GetKind()
		if kind == "ServiceAccount" && obj.GetNamespace() == controllerNamespace && obj.GetName() == controllerName {
			controllerAccount = true
		}
		if identityKinds[kind] || (shippedAPF && flowControlKinds[kind]) {
			kept = append(kept, obj)
		}
	}
	if !controllerAccount {
		return fmt.Errorf("%s has no ServiceAccount %s/%s for the controller", install, controllerNamespace, controllerName)
	}
	return manifest.ApplyObjects(ctx, b.c, kept)
}

// controllerKubeconfigFor writes a kubeconfig of the controller's
// ServiceAccount (namespace/name) with a token the TokenRequest API issued,
// as the kubelet's projected volume holds one.
func (b *bench) controllerKubeconfigFor(ctx context.Context, namespace, name string) (string, error) {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}
	token, err := b.clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, request, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: b.env.Config.Host, CertificateAuthorityData: b.env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: name}
	cfg.CurrentContext = "bench"
	path := filepath.Join(b.dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}

// userKubeconfig writes a kubeconfig of user, with a client certificate.
func (b *bench) userKubeconfig(user string) (string, error) {
	raw, err := b.env.Kubeconfig(user)
	if err != nil {
		return "", err
	}
	path := filepath.Join(b.dir, strings.ReplaceAll(user, ":", "-")+".kubeconfig")
	return path, os.WriteFile(path, raw, 0o600)
}

// startControlPlane starts kube-controller-manager (the Job controller and
// the garbage collector) and kube-scheduler under their identities.
func (b *bench) startControlPlane(kcmBinary, schedulerBinary string) (stop func(), err error) {
	kcmConfig, err := b.userKubeconfig("system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	schedulerConfig, err := b.userKubeconfig("system:kube-scheduler")
	if err != nil {
		return nil, err
	}
	kcm, err := startProcess(b.dir, "kube-controller-manager", kcmBinary, "--kubeconfig="+kcmConfig,
		"--use-service-account-credentials", "--controllers=job,garbagecollector", "--leader-elect=false", "--secure-port=0",
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-job-syncs=10")
	if err != nil {
		return nil, err
	}
	scheduler, err := startProcess(b.dir, "kube-scheduler", schedulerBinary, "--kubeconfig="+schedulerConfig,
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=1000", "--kube-api-burst=2000")
	if err != nil {
		kcm.stop()
		return nil, err
	}
	return func() { scheduler.stop(); kcm.stop() }, nil
}
