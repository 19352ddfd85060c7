package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSelectCommand(t *testing.T) {
	tests := []struct {
		argv     []string
		wantName string
		wantArgs []string
		wantOK   bool
	}{
		{[]string{"/vktest", "serve", "--port", "9090"}, "serve", []string{"--port", "9090"}, true},
		{[]string{"/pause", "pause"}, "pause", []string{}, true},
		{[]string{"/pause"}, "pause", nil, true},
		{[]string{"/usr/local/bin/sleep"}, "sleep", nil, true},
		{[]string{"/vktest"}, "", nil, false},
		{[]string{"/vktest", "bogus"}, "bogus", []string{}, false},
		{[]string{"/vktest", "--help"}, "help", nil, true},
		{nil, "", nil, false},
	}
	for _, tt := range tests {
		name, args, ok := selectCommand(tt.argv)
		if name != tt.wantName || ok != tt.wantOK || strings.Join(args, " ") != strings.Join(tt.wantArgs, " ") {
			t.Errorf("selectCommand(%q) = %q, %q, %v; want %q, %q, %v",
				tt.argv, name, args, ok, tt.wantName, tt.wantArgs, tt.wantOK)
		}
	}
}

func TestRunSimpleCommands(t *testing.T) {
	tests := []struct {
		argv     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"vktest", "echo", "hello", "world"}, 0, "hello world\n"},
		{[]string{"vktest", "exit", "7"}, 7, "exiting with code 7\n"},
		{[]string{"vktest", "exit"}, 0, "exiting with code 0\n"},
		{[]string{"vktest", "exit", "256"}, 2, ""},
		{[]string{"vktest", "exit", "x"}, 2, ""},
		{[]string{"vktest", "sleep", "0.01"}, 0, ""},
		{[]string{"vktest", "sleep"}, 2, ""},
		{[]string{"vktest", "sleep", "-1"}, 2, ""},
		{[]string{"vktest", "nope"}, 2, ""},
		{[]string{"vktest"}, 2, ""},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(tt.argv, &out, &errOut)
		if code != tt.wantCode || out.String() != tt.wantOut {
			t.Errorf("run(%q) = %d, stdout %q (stderr %q); want %d, %q",
				tt.argv, code, out.String(), errOut.String(), tt.wantCode, tt.wantOut)
		}
	}
}

func TestParseSleep(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"5", 5 * time.Second, false},
		{"0.5", 500 * time.Millisecond, false},
		{"0", 0, false},
		{"1m30s", 90 * time.Second, false},
		{"infinity", -1, false},
		{"inf", -1, false},
		{"-3", 0, true},
		{"NaN", 0, true},
		{"1e300", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		got, err := parseSleep(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("parseSleep(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseServeArgs(t *testing.T) {
	opts, err := parseServeArgs(nil, io.Discard)
	if err != nil || opts.port != 8080 || opts.host != "" {
		t.Errorf("defaults: got %+v, %v", opts, err)
	}
	opts, err = parseServeArgs([]string{"--port", "9000", "--host", "127.0.0.1"}, io.Discard)
	if err != nil || opts.port != 9000 || opts.host != "127.0.0.1" {
		t.Errorf("flags: got %+v, %v", opts, err)
	}
	opts, err = parseServeArgs([]string{"-port=81"}, io.Discard)
	if err != nil || opts.port != 81 {
		t.Errorf("single dash: got %+v, %v", opts, err)
	}
	for _, bad := range [][]string{{"--port", "x"}, {"--port", "70000"}, {"extra"}, {"--nope"}} {
		if _, err := parseServeArgs(bad, io.Discard); err == nil {
			t.Errorf("parseServeArgs(%q): want an error", bad)
		}
	}
}

func TestServeHandlers(t *testing.T) {
	t.Setenv("VKTEST_MARKER", "present")
	exited := make(chan int, 1)
	var logBuf bytes.Buffer
	s := &server{out: &logBuf, hostname: "testhost", exit: func(code int) { exited <- code }}
	ts := httptest.NewServer(s.handler())
	defer ts.Close()

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	if code, body := get("/"); code != 200 || body != "hello from testhost\n" {
		t.Errorf("GET /: %d %q", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("GET /healthz: %d", code)
	}
	if code, body := get("/hostname"); code != 200 || body != "testhost\n" {
		t.Errorf("GET /hostname: %d %q", code, body)
	}
	if code, body := get("/env"); code != 200 || !strings.Contains(body, "VKTEST_MARKER=present\n") {
		t.Errorf("GET /env: %d %q", code, body)
	}
	if code, _ := get("/missing"); code != 404 {
		t.Errorf("GET /missing: %d", code)
	}
	if code, _ := get("/exit?code=abc"); code != 400 {
		t.Errorf("GET /exit?code=abc: %d", code)
	}
	if code, body := get("/exit?code=42"); code != 200 || body != "exiting with code 42\n" {
		t.Errorf("GET /exit?code=42: %d %q", code, body)
	}
	select {
	case code := <-exited:
		if code != 42 {
			t.Errorf("exit code %d, want 42", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("/exit did not call exit")
	}
	s.outMu.Lock()
	logged := logBuf.String()
	s.outMu.Unlock()
	if !strings.Contains(logged, "GET /healthz HTTP/1.1") || !strings.Contains(logged, "GET /exit?code=42 HTTP/1.1") {
		t.Errorf("request log missing lines:\n%s", logged)
	}
}
