// Command vktest is a small, static, multi-purpose program for vk-cri's test images.
//
// It dispatches on its first argument (the subcommand). When it is started without
// arguments it dispatches on the base name of argv[0] instead, so the same binary
// installed as /pause behaves like a pause container.
//
//	vktest pause                        sleep until SIGINT/SIGTERM (exit 0), reap zombies
//	vktest serve [--port 8080]          HTTP server (/, /healthz, /env, /hostname, /exit?code=N)
//	vktest exit N                       print a line and exit with code N
//	vktest sleep [--ignore-term] SECS   sleep (SECS may be a number, a Go duration or "infinity")
//	vktest echo ARGS...                 print ARGS separated by spaces
//	vktest env                          print the environment, one variable per line
//	vktest hostname                     print the host name
//
// Build it with: CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' ./test/images/vktest
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const usage = `usage: vktest COMMAND [ARGS...]

commands:
  pause                        sleep until SIGINT/SIGTERM (exit 0), reaping zombie children
  serve [--port 8080]          HTTP server: / /healthz /env /hostname /exit?code=N
  exit N                       print a line and exit with code N
  sleep [--ignore-term] SECS   sleep SECS (number, Go duration or "infinity"); exits 0 on SIGTERM
                               unless --ignore-term is given
  echo ARGS...                 print ARGS separated by spaces
  env                          print the environment
  hostname                     print the host name
`

// command runs a subcommand with its arguments and returns the process exit code.
type command func(args []string, stdout, stderr io.Writer) int

var commands map[string]command

func init() {
	commands = map[string]command{
		"pause":    runPause,
		"serve":    runServe,
		"exit":     runExit,
		"sleep":    runSleep,
		"echo":     runEcho,
		"env":      runEnv,
		"hostname": runHostname,
	}
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run selects the subcommand from argv and runs it.
func run(argv []string, stdout, stderr io.Writer) int {
	name, args, ok := selectCommand(argv)
	if !ok {
		if name != "" {
			fmt.Fprintf(stderr, "vktest: unknown command %q\n", name)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	if name == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	return commands[name](args, stdout, stderr)
}

// selectCommand returns the subcommand named by argv[1], or, when there is no argv[1],
// by the base name of argv[0]. ok is false when no known command is named.
func selectCommand(argv []string) (name string, args []string, ok bool) {
	if len(argv) > 1 {
		name = argv[1]
		switch name {
		case "help", "-h", "--help":
			return "help", nil, true
		}
		_, ok = commands[name]
		return name, argv[2:], ok
	}
	if len(argv) == 1 {
		base := filepath.Base(argv[0])
		if _, known := commands[base]; known {
			return base, nil, true
		}
	}
	return "", nil, false
}

// ---- pause ----

func runPause(args []string, stdout, stderr io.Writer) int {
	if os.Getpid() != 1 {
		fmt.Fprintln(stderr, "vktest pause: warning: not running as PID 1")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		switch sig {
		case syscall.SIGCHLD:
			reapChildren()
		default:
			fmt.Fprintf(stderr, "vktest pause: shutting down, got signal %v\n", sig)
			return 0
		}
	}
	return 0
}

// reapChildren collects every child that has exited, without blocking.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}

// ---- serve ----

type serveOptions struct {
	port int
	host string
}

func parseServeArgs(args []string, stderr io.Writer) (serveOptions, error) {
	opts := serveOptions{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&opts.port, "port", 8080, "TCP port to listen on")
	fs.StringVar(&opts.host, "host", "", "address to listen on (default: all)")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if opts.port < 0 || opts.port > 65535 {
		return opts, fmt.Errorf("serve: invalid port %d", opts.port)
	}
	return opts, nil
}

// server holds the HTTP handlers of "serve". exit is called (once) by /exit after the
// response has been written.
type server struct {
	out      io.Writer
	outMu    sync.Mutex
	hostname string
	exit     func(code int)
}

func (s *server) logf(format string, a ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, format, a...)
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "hello from %s\n", s.hostname)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/hostname", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, s.hostname)
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) {
		env := os.Environ()
		sort.Strings(env)
		for _, kv := range env {
			fmt.Fprintln(w, kv)
		}
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		code, err := parseExitCode(r.URL.Query().Get("code"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Connection", "close")
		fmt.Fprintf(w, "exiting with code %d\n", code)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		s.logf("exiting with code %d\n", code)
		go func() {
			// Give the server a moment to finish the response.
			time.Sleep(100 * time.Millisecond)
			s.exit(code)
		}()
	})
	return s.logRequests(mux)
}

func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.logf("%s %s %s from %s\n", r.Method, r.URL.RequestURI(), r.Proto, r.RemoteAddr)
		next.ServeHTTP(w, r)
	})
}

func runServe(args []string, stdout, stderr io.Writer) int {
	opts, err := parseServeArgs(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	hostname, err := os.Hostname()
	if err != nil {
		hostname = "unknown"
	}
	s := &server{out: stdout, hostname: hostname, exit: os.Exit}

	ln, err := net.Listen("tcp", net.JoinHostPort(opts.host, strconv.Itoa(opts.port)))
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.logf("serving on %s (hostname %s)\n", ln.Addr(), hostname)

	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	s.logf("got termination signal, shutting down\n")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return 0
}

// ---- exit ----

// parseExitCode parses an exit code in 0..255. An empty string means 0.
func parseExitCode(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	code, err := strconv.Atoi(s)
	if err != nil || code < 0 || code > 255 {
		return 0, fmt.Errorf("invalid exit code %q: want an integer in 0..255", s)
	}
	return code, nil
}

func runExit(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 {
		fmt.Fprintln(stderr, "usage: vktest exit [CODE]")
		return 2
	}
	code := 0
	if len(args) == 1 {
		var err error
		if code, err = parseExitCode(args[0]); err != nil {
			fmt.Fprintln(stderr, "exit:", err)
			return 2
		}
	}
	fmt.Fprintf(stdout, "exiting with code %d\n", code)
	return code
}

// ---- sleep ----

// parseSleep parses a duration given as seconds ("5", "0.5"), as a Go duration ("1m30s")
// or as "infinity". It returns a negative duration for infinity.
func parseSleep(s string) (time.Duration, error) {
	if s == "inf" || s == "infinity" {
		return -1, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || secs > float64(math.MaxInt64/int64(time.Second)) {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d, nil
}

func runSleep(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sleep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM and SIGINT (only SIGKILL stops the sleep)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: vktest sleep [--ignore-term] SECONDS")
		return 2
	}
	d, err := parseSleep(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "sleep:", err)
		return 2
	}
	sigs := make(chan os.Signal, 4)
	if *ignoreTerm {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	}
	if d < 0 {
		// "infinity": a pending timer also keeps the runtime from reporting a deadlock.
		d = time.Duration(math.MaxInt64)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return 0
	case sig := <-sigs:
		fmt.Fprintf(stdout, "sleep: got signal %v, exiting\n", sig)
		return 0
	}
}

// ---- small ones ----

func runEcho(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, strings.Join(args, " "))
	return 0
}

func runEnv(args []string, stdout, stderr io.Writer) int {
	for _, kv := range os.Environ() {
		fmt.Fprintln(stdout, kv)
	}
	return 0
}

func runHostname(args []string, stdout, stderr io.Writer) int {
	h, err := os.Hostname()
	if err != nil {
		fmt.Fprintln(stderr, "hostname:", err)
		return 1
	}
	fmt.Fprintln(stdout, h)
	return 0
}
