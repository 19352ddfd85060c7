package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// parse builds the flag set of a fresh options value and parses args.
func parse(t *testing.T, args ...string) (*options, *pflag.FlagSet) {
	t.Helper()
	o := defaultOptions()
	fs := pflag.NewFlagSet("vk-cri", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return o, fs
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vk-cri.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultOptions(t *testing.T) {
	o := defaultOptions()
	host, _ := os.Hostname()
	checks := []struct {
		name      string
		got, want any
	}{
		{"nodename", o.NodeName, host},
		{"cri-endpoint", o.CRIEndpoint, "unix:///run/containerd/containerd.sock"},
		{"runtime-request-timeout", o.RuntimeRequestTimeout, 2 * time.Minute},
		{"address", o.Address, "0.0.0.0"},
		{"port", o.Port, int32(10250)},
		{"root-dir", o.RootDir, "/var/lib/vk-cri"},
		{"pod-log-dir", o.PodLogDir, "/var/log/pods"},
		{"cgroup-root", o.CgroupRoot, "/vk-cri"},
		{"resolv-conf", o.ResolvConf, "/etc/resolv.conf"},
		{"max-pods", o.MaxPods, 110},
		{"workers", o.Workers, 10},
		{"log-level", o.LogLevel, "info"},
		{"log-format", o.LogFormat, "text"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if err := o.validate(); host != "" && err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestFlagsSetOptions(t *testing.T) {
	o, _ := parse(t,
		"--nodename=vk1", "--cri-endpoint=unix:///run/crio/crio.sock", "--runtime-request-timeout=30s",
		"--node-ip=10.0.0.9", "--address=127.0.0.1", "--port=11250", "--max-pods=20", "--workers=3",
		"--log-level=debug", "--log-format=json", "--root-dir=/srv/vk", "--pod-log-dir=/srv/logs",
		"--cgroup-root=/vk", "--resolv-conf=/run/resolv.conf", "--kubeconfig=/etc/kc",
	)
	if o.NodeName != "vk1" || o.CRIEndpoint != "unix:///run/crio/crio.sock" || o.RuntimeRequestTimeout != 30*time.Second ||
		o.NodeIP != "10.0.0.9" || o.Address != "127.0.0.1" || o.Port != 11250 || o.MaxPods != 20 || o.Workers != 3 ||
		o.LogLevel != "debug" || o.LogFormat != "json" || o.RootDir != "/srv/vk" || o.PodLogDir != "/srv/logs" ||
		o.CgroupRoot != "/vk" || o.ResolvConf != "/run/resolv.conf" || o.Kubeconfig != "/etc/kc" {
		t.Errorf("flags not applied: %+v", *o)
	}
}

func TestApplyConfigFile(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		config  string
		check   func(t testing.TB, o *options)
		wantErr string
		bug     string
	}{
		{
			name:   "config file sets unset flags of every type",
			config: "nodename: vk-from-file\nmax-pods: 42\nport: 11250\nruntime-request-timeout: 45s\nlog-format: json\nnode-ip: 10.1.2.3\n",
			check: func(t testing.TB, o *options) {
				if o.NodeName != "vk-from-file" || o.MaxPods != 42 || o.Port != 11250 || o.RuntimeRequestTimeout != 45*time.Second ||
					o.LogFormat != "json" || o.NodeIP != "10.1.2.3" {
					t.Errorf("options = %+v", *o)
				}
			},
		},
		{
			name:   "maps and lists: node labels and taints",
			config: "node-labels:\n  b: \"2\"\n  a: x\nregister-with-taints: [\"k=v:NoSchedule\", \"j:NoExecute\"]\n",
			check: func(t testing.TB, o *options) {
				if fmt.Sprint(o.NodeLabels) != "map[a:x b:2]" || fmt.Sprint(o.RegisterWithTaints) != "[k=v:NoSchedule j:NoExecute]" {
					t.Errorf("node-labels %v, register-with-taints %v", o.NodeLabels, o.RegisterWithTaints)
				}
			},
		},
		{
			name:   "command-line flag wins over the file",
			args:   []string{"--nodename=vk-from-flag", "--max-pods=7"},
			config: "nodename: vk-from-file\nmax-pods: 42\nworkers: 4\n",
			check: func(t testing.TB, o *options) {
				if o.NodeName != "vk-from-flag" || o.MaxPods != 7 {
					t.Errorf("flags lost: nodename %q max-pods %d", o.NodeName, o.MaxPods)
				}
				if o.Workers != 4 {
					t.Errorf("workers = %d, want 4 from the file", o.Workers)
				}
			},
		},
		{
			name:   "a flag given with its default value still wins",
			args:   []string{"--max-pods=110"},
			config: "max-pods: 5\n",
			check: func(t testing.TB, o *options) {
				if o.MaxPods != 110 {
					t.Errorf("max-pods = %d, want 110 from the command line", o.MaxPods)
				}
			},
		},
		{
			name:   "settings absent from the file keep their defaults",
			config: "log-level: warn\n",
			check: func(t testing.TB, o *options) {
				if o.LogLevel != "warn" || o.MaxPods != 110 || o.CRIEndpoint != "unix:///run/containerd/containerd.sock" {
					t.Errorf("options = %+v", *o)
				}
			},
		},
		{
			name:   "empty file changes nothing",
			config: "",
			check: func(t testing.TB, o *options) {
				if o.MaxPods != 110 {
					t.Errorf("max-pods = %d", o.MaxPods)
				}
			},
		},
		{
			name:   "comments and quoted strings",
			config: "# vk-cri settings\nnodename: \"vk-2\" # quoted\ncgroup-root: '/vk'\n",
			check: func(t testing.TB, o *options) {
				if o.NodeName != "vk-2" || o.CgroupRoot != "/vk" {
					t.Errorf("options = %+v", *o)
				}
			},
		},
		{
			name:   "a numeric-looking string value",
			config: "nodename: 12345\n",
			check: func(t testing.TB, o *options) {
				if o.NodeName != "12345" {
					t.Errorf("nodename = %q", o.NodeName)
				}
			},
		},
		{name: "unknown key is an error", config: "nodename: a\nno-such-flag: 1\n", wantErr: `unknown setting "no-such-flag"`},
		{name: "the config key itself is not a setting", config: "config: other.yaml\n", wantErr: `unknown setting "config"`},
		{name: "key spelled like the struct field is unknown", config: "NodeName: a\n", wantErr: `unknown setting "NodeName"`},
		{name: "value of the wrong type", config: "max-pods: many\n", wantErr: `setting "max-pods"`},
		{name: "invalid duration", config: "runtime-request-timeout: soon\n", wantErr: `setting "runtime-request-timeout"`},
		{name: "duration without a unit", config: "runtime-request-timeout: 120\n", wantErr: `setting "runtime-request-timeout"`},
		{name: "fractional number for an int flag", config: "port: 10250.5\n", wantErr: `setting "port"`},
		{name: "not a mapping", config: "- nodename\n- vk1\n", wantErr: "parsing config file"},
		{name: "invalid YAML", config: "nodename: [unclosed\n", wantErr: "parsing config file"},

		// --- bugs ---
		{
			name:   "a large integer is set as written",
			config: "max-pods: 1000000\n",
			check: func(t testing.TB, o *options) {
				if o.MaxPods != 1000000 {
					t.Errorf("max-pods = %d, want 1000000", o.MaxPods)
				}
			},
			bug: "YAML numbers arrive as float64 and fmt.Sprint renders 1000000 as \"1e+06\", which the int flag rejects (any integer ≥ 1e6, e.g. max-pods or a numeric nodename)",
		},
		{
			name:   "an empty value leaves the setting empty",
			config: "kubeconfig:\n",
			check: func(t testing.TB, o *options) {
				if o.Kubeconfig != "" {
					t.Errorf("kubeconfig = %q, want empty", o.Kubeconfig)
				}
			},
			bug: "a YAML null (\"key:\" with no value) is set as the string \"<nil>\" (fmt.Sprint(nil)); for string flags that silently becomes the value, e.g. --kubeconfig=<nil>",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, fs := parse(t, tc.args...)
			err := applyConfigFile(fs, writeConfig(t, tc.config))
			if tc.bug != "" {
				// Record the failure, then report it as the known bug.
				rec := &recorder{TB: t}
				if err != nil {
					rec.Errorf("applyConfigFile: %v", err)
				} else if tc.check != nil {
					tc.check(rec, o)
				}
				if rec.failed {
					t.Errorf("regression of a fixed bug: %s\n%s", tc.bug, rec.msgs)
				}
				t.Logf("known bug no longer reproduces: %s", tc.bug)
				return
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("applyConfigFile = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("applyConfigFile: %v", err)
			}
			tc.check(t, o)
		})
	}
}

// recorder collects Errorf calls instead of failing the test, for known-bug rows.
type recorder struct {
	testing.TB
	failed bool
	msgs   string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs += strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n"
}

func TestApplyConfigFileMissing(t *testing.T) {
	_, fs := parse(t)
	err := applyConfigFile(fs, filepath.Join(t.TempDir(), "absent.yaml"))
	if err == nil || !strings.Contains(err.Error(), "reading config file") {
		t.Errorf("applyConfigFile(missing) = %v", err)
	}
}

// Settings applied from the file count as given: a second file does not override them.
func TestApplyConfigFileTwice(t *testing.T) {
	o, fs := parse(t)
	if err := applyConfigFile(fs, writeConfig(t, "max-pods: 5\n")); err != nil {
		t.Fatal(err)
	}
	if err := applyConfigFile(fs, writeConfig(t, "max-pods: 9\n")); err != nil {
		t.Fatal(err)
	}
	if o.MaxPods != 5 {
		t.Errorf("max-pods = %d, want 5 from the first file", o.MaxPods)
	}
}

func TestValidate(t *testing.T) {
	valid := func() *options {
		o := defaultOptions()
		o.NodeName = "vk1"
		return o
	}
	cases := []struct {
		name    string
		mod     func(*options)
		wantErr string
		bug     string
	}{
		{name: "defaults with a node name", mod: func(*options) {}},
		{name: "json logs", mod: func(o *options) { o.LogFormat = "json" }},
		{name: "TLS with client CA", mod: func(o *options) { o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile = "c.pem", "k.pem", "ca.pem" }},
		{name: "node labels and taints", mod: func(o *options) {
			o.NodeLabels = map[string]string{"vk-cri.io/pool": "a", "env": ""}
			o.RegisterWithTaints = []string{"dedicated=vk:NoSchedule", "vk-cri.io/test:NoExecute"}
		}},
		{name: "bad node label key", mod: func(o *options) { o.NodeLabels = map[string]string{"a b": "x"} }, wantErr: `--node-labels: invalid key "a b"`},
		{name: "kubernetes.io node labels without a node identity", mod: func(o *options) {
			o.NodeLabels = map[string]string{"app.kubernetes.io/name": "x"}
		}},
		{name: "bootstrap without kubeconfig", mod: func(o *options) { o.BootstrapKubeconfig = "b" }, wantErr: "--bootstrap-kubeconfig needs --kubeconfig"},
		{name: "rotation without bootstrap", mod: func(o *options) { o.RotateCertificates = true }, wantErr: "--rotate-certificates needs --bootstrap-kubeconfig"},
		{name: "restricted node label with a node identity", mod: func(o *options) {
			o.BootstrapKubeconfig, o.Kubeconfig = "bootstrap.kubeconfig", "kubelet.kubeconfig"
			o.NodeLabels = map[string]string{"app.kubernetes.io/name": "x", "node-restriction.kubernetes.io/pool": "a", "node.kubernetes.io/pool": "ok", "kubernetes.io/hostname": "ok", "example.com/a": "ok"}
		}, wantErr: `a node may not set the kubernetes.io or k8s.io labels app.kubernetes.io/name, node-restriction.kubernetes.io/pool (NodeRestriction)`},
		{name: "bad node label value", mod: func(o *options) { o.NodeLabels = map[string]string{"a": "x y"} }, wantErr: `--node-labels: invalid value "x y" of "a"`},
		{name: "bad taint", mod: func(o *options) { o.RegisterWithTaints = []string{"a=b"} }, wantErr: `--register-with-taints: "a=b": want key=value:Effect`},
		{name: "no node name", mod: func(o *options) { o.NodeName = "" }, wantErr: "--nodename is required"},
		{name: "cert without key", mod: func(o *options) { o.TLSCertFile, o.ClientCAFile = "c.pem", "ca.pem" }, wantErr: "go together"},
		{name: "key without cert", mod: func(o *options) { o.TLSKeyFile, o.ClientCAFile = "k.pem", "ca.pem" }, wantErr: "go together"},
		{name: "TLS with token webhook only", mod: func(o *options) { o.TLSCertFile, o.TLSKeyFile = "c.pem", "k.pem" }},
		{name: "TLS without any authentication", mod: func(o *options) {
			o.TLSCertFile, o.TLSKeyFile, o.AuthenticationTokenWebhook = "c.pem", "k.pem", false
		}, wantErr: "no way to authenticate"},
		{name: "CSR certificate", mod: func(o *options) { o.RotateServerCertificates = true }},
		{name: "two certificate sources", mod: func(o *options) { o.RotateServerCertificates, o.SelfSignedServingCert = true, true }, wantErr: "exclude each other"},
		{name: "unknown authorization mode", mod: func(o *options) { o.SelfSignedServingCert, o.AuthorizationMode = true, "RBAC" }, wantErr: "authorization mode"},
		{name: "healthz port out of range", mod: func(o *options) { o.HealthzPort = 70000 }, wantErr: "--healthz-port"},
		{name: "zero max pods", mod: func(o *options) { o.MaxPods = 0 }, wantErr: "--max-pods must be positive"},
		{name: "negative max pods", mod: func(o *options) { o.MaxPods = -1 }, wantErr: "--max-pods must be positive"},
		{name: "unknown log format", mod: func(o *options) { o.LogFormat = "yaml" }, wantErr: `--log-format must be text or json, not "yaml"`},
		{name: "empty log format", mod: func(o *options) { o.LogFormat = "" }, wantErr: "--log-format must be text or json"},
		{
			name: "zero workers", mod: func(o *options) { o.Workers = 0 }, wantErr: "--workers",
			bug: "validate accepts --workers <= 0; virtual-kubelet's queue.Run panics with \"Workers must be greater than 0\" in the pod controller goroutine",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := valid()
			tc.mod(o)
			err := o.validate()
			ok := (tc.wantErr == "" && err == nil) || (tc.wantErr != "" && err != nil && strings.Contains(err.Error(), tc.wantErr))
			if tc.bug != "" {
				if !ok {
					t.Errorf("regression of a fixed bug: %s (validate = %v)", tc.bug, err)
				}
				return
			}
			if !ok {
				t.Errorf("validate = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}
