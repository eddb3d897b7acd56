// Command worker is the training worker of the end-to-end tests and the
// demo: it runs until told to fail, and keeps a log of its starts on a
// volume, so that a test can tell an in-place restart (same volume, one more
// start) from a recreated Pod (an empty volume).
//
// HTTP on :8081 (reached through the apiserver's Pod proxy):
//
//	GET /starts           the start log: one line per start, "<pod UID> <time>"
//	GET /exit?code=N      exit with code N (after answering)
//	GET /resolve?host=H   the addresses H resolves to, one per line
//	GET /kill?name=P      SIGKILL every process whose command is P (with
//	                      shareProcessNamespace: the agent sidecar, to crash it)
//	GET /secrets          every file under /var/run/secrets this container
//	                      sees (a ServiceAccount token among them?), one per
//	                      line; nothing when there are none
//	GET /sigkill          SIGKILL the worker itself (after answering): a
//	                      worker killed, as by the OOM killer
//	GET /stray?n=N&tag=T  ignore SIGTERM from now on, and start N processes
//	                      that ignore it too and never end, every second
//	                      one in a session of its own (outside the worker's
//	                      process group), none ever waited for; each runs
//	                      as "worker-stray T", for a test to find on the
//	                      node
//	GET /hang             stop reporting progress and keep running: a hung
//	                      worker (a deadlocked collective)
//
// Under the worker wrapper, it reports progress every half second by
// touching the file JOBSET_PROGRESS_FILE names, as a training loop would
// after each step.
//
// "/worker -orphan T" starts one such stray and exits at once, leaving it
// to the reaper of its PID namespace: a test starts it in the worker's
// container from outside (as another user, through the runtime), and the
// worker wrapper, PID 1 there, inherits a child it may not signal.
// "/worker -session T" becomes such a stray itself: started through the
// runtime as an exec session, it is no process of the worker's tree, and
// its parent is outside the container.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[0] == strayName {
		stray()
	}
	if len(os.Args) > 2 && os.Args[1] == "-session" {
		// Become the stray: the runtime's exec session itself, whose
		// parent is outside the container.
		self, err := os.Executable()
		if err == nil {
			err = syscall.Exec(self, []string{strayName, os.Args[2]}, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
	if len(os.Args) > 2 && os.Args[1] == "-orphan" {
		// The stray holds no stream of the runtime's exec open: that exec
		// ends with this process.
		os.Stdout, os.Stderr = nil, nil
		if _, err := startStray(os.Args[2], false); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	dataDir := envOr("DATA_DIR", "/data")
	startLog := filepath.Join(dataDir, "starts")
	if err := appendStart(startLog); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(3)
	}

	exit := make(chan int, 1)
	hang := make(chan struct{})
	if progress := os.Getenv("JOBSET_PROGRESS_FILE"); progress != "" {
		go reportProgress(progress, hang)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-hang:
		default:
			close(hang)
		}
		fmt.Fprintln(w, "no more progress")
	})
	mux.HandleFunc("/starts", func(w http.ResponseWriter, _ *http.Request) {
		data, err := os.ReadFile(startLog)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.URL.Query().Get("code"))
		if err != nil || code < 0 || code > 255 {
			http.Error(w, "code must be 0..255", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "exiting with %d\n", code)
		exit <- code
	})
	mux.HandleFunc("/resolve", func(w http.ResponseWriter, r *http.Request) {
		addrs, err := net.DefaultResolver.LookupHost(r.Context(), r.URL.Query().Get("host"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		fmt.Fprintln(w, strings.Join(addrs, "\n"))
	})
	mux.HandleFunc("/kill", func(w http.ResponseWriter, r *http.Request) {
		killed, err := killAll(r.URL.Query().Get("name"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "killed %d processes\n", killed)
	})
	mux.HandleFunc("/secrets", func(w http.ResponseWriter, _ *http.Request) {
		err := filepath.WalkDir("/var/run/secrets", func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				fmt.Fprintln(w, path)
			}
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/sigkill", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "killing myself")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		go func() {
			time.Sleep(100 * time.Millisecond) // the answer gets out first
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}()
	})
	mux.HandleFunc("/stray", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		tag := r.URL.Query().Get("tag")
		if err != nil || n < 1 || tag == "" {
			http.Error(w, "n must be a positive number, and tag set", http.StatusBadRequest)
			return
		}
		signal.Ignore(syscall.SIGTERM)
		for i := range n {
			pid, err := startStray(tag, i%2 == 1)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, pid)
		}
	})
	server := &http.Server{Addr: ":8081", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(3)
		}
	}()
	fmt.Println("worker: running")

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	code := 0
	select {
	case code = <-exit:
	case <-signals:
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = server.Shutdown(ctx)
	fmt.Printf("worker: exiting with %d\n", code)
	os.Exit(code)
}

// reportProgress touches path every half second until hang is closed.
func reportProgress(path string, hang <-chan struct{}) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		if err := os.Chtimes(path, now, now); os.IsNotExist(err) {
			_ = os.WriteFile(path, nil, 0o644)
		}
		select {
		case <-hang:
			fmt.Println("worker: no more progress reports")
			return
		case <-tick.C:
		}
	}
}

// strayName is the argv[0] of the processes /stray starts.
const strayName = "worker-stray"

// startStray starts one stray process of the worker's, in a session of its
// own if setsid, and leaves it to whoever reaps orphans.
func startStray(tag string, setsid bool) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	p, err := os.StartProcess(self, []string{strayName, tag}, &os.ProcAttr{
		Files: []*os.File{nil, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setsid: setsid},
	})
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	_ = p.Release()
	return pid, nil
}

// stray is the life of a stray process: it ignores SIGTERM and never ends.
func stray() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	for {
		time.Sleep(time.Hour)
	}
}

func appendStart(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("recording the start on the data volume: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %s\n", os.Getenv("POD_UID"), time.Now().UTC().Format(time.RFC3339Nano))
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// killAll sends SIGKILL to every process whose executable's base name is
// name, found through /proc.
func killAll(name string) (int, error) {
	if name == "" {
		return 0, fmt.Errorf("name the process: /kill?name=jobset-agent")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if filepath.Base(argv0) != name {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return killed, fmt.Errorf("killing %d: %w", pid, err)
		}
		killed++
	}
	if killed == 0 {
		return 0, fmt.Errorf("no process %q (is shareProcessNamespace on?)", name)
	}
	return killed, nil
}
