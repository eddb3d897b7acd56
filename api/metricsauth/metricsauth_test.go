package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// fakeReviewer knows one token, of a user allowed only get /metrics.
type fakeReviewer struct{ err error }

func (f fakeReviewer) Authenticate(_ context.Context, token string) (*authenticationv1.UserInfo, error) {
	if f.err != nil {
		return nil, f.err
	}
	if token != "good" {
		return nil, nil
	}
	return &authenticationv1.UserInfo{Username: "scraper"}, nil
}

func (f fakeReviewer) Authorize(_ context.Context, _ *authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	return verb == "get" && path == "/metrics", "", nil
}

// What each kind of request is answered (the real API server's reviews
// are tested with both binaries against envtest).
func TestFilter(t *testing.T) {
	for name, c := range map[string]struct {
		reviewer      Reviewer
		method, path  string
		authorization string
		want          int
	}{
		"no token":               {fakeReviewer{}, http.MethodGet, "/metrics", "", http.StatusUnauthorized},
		"not a bearer token":     {fakeReviewer{}, http.MethodGet, "/metrics", "Basic Z29vZA==", http.StatusUnauthorized},
		"empty bearer token":     {fakeReviewer{}, http.MethodGet, "/metrics", "Bearer ", http.StatusUnauthorized},
		"unknown token":          {fakeReviewer{}, http.MethodGet, "/metrics", "Bearer bad", http.StatusUnauthorized},
		"authorized":             {fakeReviewer{}, http.MethodGet, "/metrics", "Bearer good", http.StatusOK},
		"scheme in other case":   {fakeReviewer{}, http.MethodGet, "/metrics", "bearer good", http.StatusOK},
		"another path":           {fakeReviewer{}, http.MethodGet, "/debug", "Bearer good", http.StatusForbidden},
		"another verb":           {fakeReviewer{}, http.MethodPost, "/metrics", "Bearer good", http.StatusForbidden},
		"API server cannot tell": {fakeReviewer{err: errors.New("connection refused")}, http.MethodGet, "/metrics", "Bearer good", http.StatusInternalServerError},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := WithReviewer(c.reviewer)(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
			}))
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(c.method, c.path, nil)
			if c.authorization != "" {
				req.Header.Set("Authorization", c.authorization)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("HTTP %d, want %d", rec.Code, c.want)
			}
		})
	}
}
