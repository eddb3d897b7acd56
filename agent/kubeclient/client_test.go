package kubeclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var jobSets = Resource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// recorded is what the fake API server saw of one request.
type recorded struct {
	Method, URL, ContentType, Accept, UserAgent, Body string
}

// fakeServer answers every request with handler and records it.
func fakeServer(t *testing.T, handler http.HandlerFunc) (*Client, *[]recorded) {
	t.Helper()
	var seen []recorded
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, recorded{r.Method, r.URL.String(), r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("User-Agent"), string(body)})
		handler(w, r)
	}))
	t.Cleanup(server.Close)
	c, err := New(server.URL, server.Client(), "jobset-agent/ns/trainer-workers-0-0")
	if err != nil {
		t.Fatal(err)
	}
	return c, &seen
}

func TestMergePatch(t *testing.T) {
	c, seen := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"kind":"Pod"}`))
	})
	patch := []byte(`{"metadata":{"annotations":{"jobset.sigs.k8s.io/epoch":"2"}}}`)
	if err := c.MergePatch(context.Background(), Resource{Version: "v1", Resource: "pods"}, "ns", "trainer-workers-0-0", patch); err != nil {
		t.Fatal(err)
	}
	want := []recorded{{
		Method: "PATCH", URL: "/api/v1/namespaces/ns/pods/trainer-workers-0-0",
		ContentType: "application/merge-patch+json", Accept: "application/json",
		UserAgent: "jobset-agent/ns/trainer-workers-0-0", Body: string(patch),
	}}
	if diff := cmp.Diff(want, *seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestWatch(t *testing.T) {
	c, seen := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"metadata":{"resourceVersion":"7"}}}
{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old resource version: 5 (9)"}}
`))
	})
	w, err := c.Watch(context.Background(), jobSets, "ns", WatchOptions{Name: "trainer", ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []Event
	for {
		e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if diff := cmp.Diff([]EventType{Added, Bookmark, Error}, []EventType{got[0].Type, got[1].Type, got[2].Type}); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if string(got[1].Object) != `{"metadata":{"resourceVersion":"9"}}` {
		t.Errorf("bookmark object: %s", got[1].Object)
	}
	if err := got[2].Err(); !IsExpired(err) {
		t.Errorf("ERROR event: got %v, want an expired resourceVersion", err)
	}
	wantURL := "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ns/jobsets?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dtrainer&resourceVersion=5&watch=true"
	if (*seen)[0].URL != wantURL {
		t.Errorf("watch URL: got %s, want %s", (*seen)[0].URL, wantURL)
	}
}

func TestFailedRequests(t *testing.T) {
	cases := map[string]struct {
		code        int
		retryHeader string
		body        string
		want        *StatusError
		expired     bool
	}{
		"429 with retryAfterSeconds": {
			code: 429, body: `{"kind":"Status","reason":"TooManyRequests","code":429,"message":"slow down","details":{"retryAfterSeconds":3}}`,
			want: &StatusError{Code: 429, Reason: "TooManyRequests", Message: "slow down", RetryAfter: 3 * time.Second},
		},
		"429 with only the Retry-After header": {
			code: 429, retryHeader: "2", body: `{"kind":"Status","reason":"TooManyRequests","code":429,"message":"slow down"}`,
			want: &StatusError{Code: 429, Reason: "TooManyRequests", Message: "slow down", RetryAfter: 2 * time.Second},
		},
		"410 Gone on a watch that resumes too late": {
			code: 410, body: `{"kind":"Status","reason":"Expired","code":410,"message":"too old resource version"}`,
			want:    &StatusError{Code: 410, Reason: "Expired", Message: "too old resource version"},
			expired: true,
		},
		"a body that is not a Status (a proxy's error page)": {
			code: 502, body: "upstream connect error\n",
			want: &StatusError{Code: 502, Reason: "Bad Gateway", Message: "upstream connect error"},
		},
		"403 from RBAC": {
			code: 403, body: `{"kind":"Status","reason":"Forbidden","code":403,"message":"pods \"w\" is forbidden"}`,
			want: &StatusError{Code: 403, Reason: "Forbidden", Message: `pods "w" is forbidden`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryHeader != "" {
					w.Header().Set("Retry-After", tc.retryHeader)
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			})
			_, err := c.Watch(context.Background(), jobSets, "ns", WatchOptions{})
			var got *StatusError
			if !errors.As(err, &got) {
				t.Fatalf("got %v, want a *StatusError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if IsExpired(err) != tc.expired {
				t.Errorf("IsExpired: got %v, want %v", IsExpired(err), tc.expired)
			}
			after, ok := RetryAfter(err)
			if ok != (tc.want.RetryAfter > 0) || after != tc.want.RetryAfter {
				t.Errorf("RetryAfter: got %v, %v; want %v", after, ok, tc.want.RetryAfter)
			}
		})
	}
}

func TestNewRejectsAddressesWithoutScheme(t *testing.T) {
	for _, host := range []string{"10.0.0.1:443", "ftp://apiserver", "https://"} {
		if _, err := New(host, http.DefaultClient, ""); err == nil {
			t.Errorf("New(%q): want an error", host)
		}
	}
}

// watchServer answers every watch with one ADDED event, then ends it, or
// holds it open with nothing more, as over a connection that died (hang);
// each watch's timeoutSeconds goes to the channel. Its client counts on
// pings, as the in-cluster client does.
func watchServer(t *testing.T, http2, hang bool) (*Client, <-chan string) {
	t.Helper()
	queries := make(chan string, 4)
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.Query().Get("timeoutSeconds")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{}}`+"\n")
		w.(http.Flusher).Flush()
		if hang {
			<-r.Context().Done()
		}
	}))
	if http2 {
		server.EnableHTTP2 = true
		server.StartTLS()
	} else {
		server.Start()
	}
	t.Cleanup(server.Close)
	c, err := New(server.URL, server.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	c.linkSlack = LinkSlack
	return c, queries
}

// Over HTTP/1.x no health check pings an idle connection: a watch whose
// connection died silently would look open until TCP's keepalive gives
// up, minutes later, and the agent would count itself in contact. The
// client then bounds every watch, and closes one the server did not end.
func TestWatchOverHTTP1IsBounded(t *testing.T) {
	c, queries := watchServer(t, false, true)
	w, err := c.Watch(context.Background(), jobSets, "ns", WatchOptions{Name: "trainer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	request := func() string {
		select {
		case q := <-queries:
			return q
		case <-time.After(10 * boundedWatch):
			return "(no request)"
		}
	}
	if got := []string{request(), request()}; !cmp.Equal(got, []string{"", "5"}) {
		t.Errorf("timeoutSeconds of the first two watches = %q, want none, then 5 once the answer came over HTTP/1.1", got)
	}
	if !c.http1.Load() {
		t.Error("the client does not know it speaks HTTP/1.1")
	}
	if e, err := w.Next(); err != nil || e.Type != Added {
		t.Fatalf("first event: %v, %v", e, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := w.Next()
		ended <- err
	}()
	select {
	case err := <-ended:
		if !errors.Is(err, ErrWatchOutlived) {
			t.Errorf("Next() = %v, want ErrWatchOutlived", err)
		}
	case <-time.After(10 * boundedWatch):
		t.Fatal("a watch the server never ended is still open")
	}
}

// Over HTTP/2 the transport's health check finds a dead connection: watches
// last as long as the server lets them.
func TestWatchOverHTTP2IsNotBounded(t *testing.T) {
	c, queries := watchServer(t, true, false)
	w, err := c.Watch(context.Background(), jobSets, "ns", WatchOptions{Name: "trainer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := <-queries; got != "" || c.http1.Load() {
		t.Errorf("timeoutSeconds %q, HTTP/1.x %v over HTTP/2; want none, false", got, c.http1.Load())
	}
	if w.deadline != nil {
		t.Error("an HTTP/2 watch has a deadline")
	}
}
