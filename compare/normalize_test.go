package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/vk-cri/vk-cri/internal/golden"
)

func TestNormalizePodGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/normalize/pods/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no pod fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var pod v1.Pod
			if err := yaml.UnmarshalStrict(data, &pod); err != nil {
				t.Fatal(err)
			}
			before := pod.DeepCopy()
			snap := NormalizePod(&pod)
			if !reflect.DeepEqual(before, &pod) {
				t.Error("NormalizePod modified its argument")
			}
			if again := NormalizePod(&pod); !again.Equal(snap) {
				t.Error("NormalizePod is not deterministic")
			}
			out, err := json.MarshalIndent(snap, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
			out = append(out, []byte("# String(): "+snap.String()+"\n")...)
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", out)
		})
	}
}

// Volatile fields alone must not change the snapshot.
func TestNormalizePodIgnoresVolatileFields(t *testing.T) {
	data, err := os.ReadFile("testdata/normalize/pods/running-ready.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var a v1.Pod
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	b := a.DeepCopy()
	b.Namespace, b.UID, b.ResourceVersion = "cmp-other-b-zzzzz", "other", "9999"
	b.Spec.NodeName = "ref"
	b.Status.PodIP, b.Status.HostIP = "10.88.0.99", "192.168.1.99"
	b.Status.PodIPs = nil
	b.Status.StartTime = nil
	for i := range b.Status.Conditions {
		b.Status.Conditions[i].LastTransitionTime.Time = b.Status.Conditions[i].LastTransitionTime.Add(3e9)
		b.Status.Conditions[i].Message = "other text"
	}
	for i := range b.Status.ContainerStatuses {
		cs := &b.Status.ContainerStatuses[i]
		cs.ContainerID, cs.ImageID, cs.Image = "containerd://ffff", "sha256:ffff", "other:image"
		if cs.State.Running != nil {
			cs.State.Running.StartedAt.Time = cs.State.Running.StartedAt.Add(5e9)
		}
	}
	// Container status order is not meaningful either.
	cs := b.Status.ContainerStatuses
	cs[0], cs[1] = cs[1], cs[0]
	if sa, sb := NormalizePod(&a), NormalizePod(b); !sa.Equal(sb) {
		t.Errorf("snapshots differ:\n%s\n%s", sa, sb)
	}
	// ...while a meaningful one does.
	b.Status.ContainerStatuses[0].RestartCount++
	if sa, sb := NormalizePod(&a), NormalizePod(b); sa.Equal(sb) {
		t.Error("a restart count change went unnoticed")
	}
}

func TestNormalizeTextGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/normalize/texts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Volatile struct {
			Namespaces []string `json:"namespaces"`
			Nodes      []string `json:"nodes"`
			UIDs       []string `json:"uids"`
		} `json:"volatile"`
		Cases []struct {
			Name string `json:"name"`
			In   string `json:"in"`
		} `json:"cases"`
	}
	if err := yaml.UnmarshalStrict(data, &in); err != nil {
		t.Fatal(err)
	}
	v := Volatile{Namespaces: in.Volatile.Namespaces, Nodes: in.Volatile.Nodes, UIDs: in.Volatile.UIDs}
	var b strings.Builder
	for _, c := range in.Cases {
		got := NormalizeText(c.In, v)
		if again := NormalizeText(got, v); again != got {
			t.Errorf("%s: normalising twice changes the text:\n%s\n%s", c.Name, got, again)
		}
		b.WriteString("=== " + c.Name + "\n" + got)
		if !strings.HasSuffix(got, "\n") {
			b.WriteString("\n")
		}
	}
	golden.Check(t, "testdata/normalize/texts.golden", []byte(b.String()))
}

// The same text from two sides normalises to the same result when only volatile parts differ.
func TestNormalizeTextSymmetric(t *testing.T) {
	v := Volatile{Namespaces: []string{"cmp-s-a-aaaaa", "cmp-s-b-bbbbb"}, Nodes: []string{"vk-cmpa", "ref"}, UIDs: []string{"u-1", "u-2"}}
	a := `pods "main" is forbidden: error looking up service account cmp-s-a-aaaaa/default on vk-cmpa (uid u-1, ip 10.88.0.3:8080)`
	b := `pods "main" is forbidden: error looking up service account cmp-s-b-bbbbb/default on ref (uid u-2, ip 10.88.0.9:8080)`
	if na, nb := NormalizeText(a, v), NormalizeText(b, v); na != nb {
		t.Errorf("not symmetric:\n%s\n%s", na, nb)
	}
}
