// Package kubeclient is the agent's API client: the two calls it makes (a
// merge patch of its Pod and a watch of its JobSet) over the standard
// library's HTTP client, and the in-cluster configuration. The agent runs in
// every worker Pod, so it does without client-go, whose serializers and
// typed clients would more than double its binary.
package kubeclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Client talks JSON to one API server.
type Client struct {
	host      string
	http      *http.Client
	userAgent string
	// linkSlack: see LinkSlack.
	linkSlack time.Duration
	// http1: the API server answered over HTTP/1.x (a proxy on the way
	// that speaks no HTTP/2), where no health check pings an idle
	// connection: see boundedWatch.
	http1 atomic.Bool
}

// boundedWatch is how long a watch lasts over HTTP/1.x, where nothing
// would show a connection that died silently until TCP's keepalive gives
// up, minutes later: the server ends each watch after boundedWatch, and a
// watch still open PingTimeout after that is closed as dead. So a dead
// connection looks open no longer than LinkSlack, as over HTTP/2, at the
// cost of a new watch, resumed from its resourceVersion, every
// boundedWatch.
const boundedWatch = PingAfter

// LinkSlack is the longest a connection of this client that died silently
// may look open: the in-cluster client's health check (the constant
// LinkSlack); 0 for a client whose transport pings nothing, whose
// connections are closed when they fail (tests).
func (c *Client) LinkSlack() time.Duration { return c.linkSlack }

// New returns a client for the API server at host (scheme://host[:port]),
// sending requests through httpClient, which carries the credentials.
func New(host string, httpClient *http.Client, userAgent string) (*Client, error) {
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("API server address %q: want scheme://host[:port] with scheme http or https", host)
	}
	return &Client{host: strings.TrimSuffix(host, "/"), http: httpClient, userAgent: userAgent}, nil
}

// Resource names a namespaced collection: /api/v1/namespaces/ns/pods is
// {Group: "", Version: "v1", Resource: "pods"}.
type Resource struct {
	Group, Version, Resource string
}

func (c *Client) collectionURL(r Resource, namespace string) string {
	prefix := "/apis/" + r.Group
	if r.Group == "" {
		prefix = "/api"
	}
	return c.host + prefix + "/" + r.Version + "/namespaces/" + url.PathEscape(namespace) + "/" + r.Resource
}

// MergePatch applies a JSON merge patch to one object; the response body is
// discarded.
func (c *Client) MergePatch(ctx context.Context, r Resource, namespace, name string, patch []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch,
		c.collectionURL(r, namespace)+"/"+url.PathEscape(name), bytes.NewReader(patch))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body) // so that the connection is reused
	return nil
}

// WatchOptions select what a watch sees.
type WatchOptions struct {
	// Name restricts the watch to one object (a field selector on
	// metadata.name).
	Name string
	// ResourceVersion resumes after this version; empty starts with the
	// current state as ADDED events.
	ResourceVersion string
}

// Watch opens a watch of a namespaced collection, with bookmarks. The watch
// lasts until ctx ends, the server closes it, or Stop.
func (c *Client) Watch(ctx context.Context, r Resource, namespace string, opts WatchOptions) (*Watcher, error) {
	query := url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"}}
	if opts.Name != "" {
		query.Set("fieldSelector", "metadata.name="+opts.Name)
	}
	if opts.ResourceVersion != "" {
		query.Set("resourceVersion", opts.ResourceVersion)
	}
	bounded := c.linkSlack > 0 && c.http1.Load()
	if bounded {
		query.Set("timeoutSeconds", strconv.Itoa(int(boundedWatch/time.Second)))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.collectionURL(r, namespace)+"?"+query.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if c.linkSlack > 0 && resp.ProtoMajor < 2 && !bounded {
		// Opened without a bound, before the client knew: reopen it bounded.
		c.http1.Store(true)
		_ = resp.Body.Close()
		return c.Watch(ctx, r, namespace, opts)
	}
	if bounded {
		return newWatcher(resp.Body, boundedWatch+PingTimeout), nil
	}
	return newWatcher(resp.Body, 0), nil
}

// do sends req and turns a response other than 2xx into a *StatusError.
func (c *Client) do(req *http.Request) (*http.Response, error) {
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, statusErrorFrom(resp)
	}
	return resp, nil
}
