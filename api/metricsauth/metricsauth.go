// Package metricsauth guards the controller's and the webhook's metrics
// endpoints as community JobSet's are guarded: each scrape's bearer token
// is authenticated by the API server (a TokenReview) and the identity it
// names authorized for the request's verb on the non-resource URL (a
// SubjectAccessReview, get /metrics), so that only a scraper bound to the
// ClusterRole jobset-metrics-reader is served. It answers as
// controller-runtime's filters.WithAuthenticationAndAuthorization does
// (401 without a valid token, 403 when not authorized, 500 when the API
// server cannot say), through client-go's typed clients that the binaries
// link anyway: that filter would link k8s.io/apiserver and, through it,
// gRPC, OpenTelemetry and CEL into both binaries and the Bazel build.
package metricsauth

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// A binary that serves with it needs create on tokenreviews
// (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io):
// each says so in its own RBAC markers, which controller-gen reads per
// binary.

// reviewTimeout bounds each review; Prometheus's own scrape timeout is
// 10 s by default.
const reviewTimeout = 10 * time.Second

// Reviewer asks the API server about a token: who it is, and whether that
// identity may do what the request asks.
type Reviewer interface {
	Authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error)
	Authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (allowed bool, reason string, err error)
}

// Filter is a metricsserver.FilterProvider (Options.FilterProvider).
func Filter(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return WithReviewer(apiReviewer{cs}), nil
}

// WithReviewer is the filter with the reviews r makes.
func WithReviewer(r Reviewer) metricsserver.Filter {
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
			defer cancel()
			token, ok := bearerToken(req)
			if !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			user, err := r.Authenticate(ctx, token)
			if err != nil {
				log.Error(err, "Authentication failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if user == nil {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			allowed, reason, err := r.Authorize(ctx, user, strings.ToLower(req.Method), req.URL.Path)
			if err != nil {
				log.Error(err, "Authorization failed", "user", user.Username)
				http.Error(w, "Authorization for user "+user.Username+" failed", http.StatusInternalServerError)
				return
			}
			if !allowed {
				log.V(4).Info("Authorization denied", "user", user.Username, "reason", reason)
				http.Error(w, "Authorization denied for user "+user.Username, http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}
}

// bearerToken is the request's "Authorization: Bearer <token>".
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

type apiReviewer struct{ cs kubernetes.Interface }

// Authenticate returns the token's user, or nil for a token the API
// server does not accept.
func (a apiReviewer) Authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	tr, err := a.cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	if !tr.Status.Authenticated {
		return nil, nil
	}
	return &tr.Status.User, nil
}

func (a apiReviewer) Authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: path},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, "", err
	}
	return sar.Status.Allowed && !sar.Status.Denied, sar.Status.Reason, nil
}
