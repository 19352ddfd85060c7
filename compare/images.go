package compare

import (
	"bytes"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// CorpusRegistry is the registry the corpus's images are named in: the local stack's loopback
// registry. On another cluster the images are pushed to a registry it can pull from
// (hack/compare-push-images.sh) and the scenarios are retargeted to it (--image-registry).
const CorpusRegistry = "127.0.0.1:5000"

// RetargetImages renames, in every pod and in the patches of update steps, the images of the
// corpus registry to the same repositories in registry.
func RetargetImages(scenarios []*Scenario, registry string) {
	if registry == "" || registry == CorpusRegistry {
		return
	}
	from, to := CorpusRegistry+"/", strings.TrimSuffix(registry, "/")+"/"
	for _, sc := range scenarios {
		for _, p := range sc.Pods {
			forEachImage(&p.Spec, func(image *string) {
				if rest, ok := strings.CutPrefix(*image, from); ok {
					*image = to + rest
				}
			})
		}
		for _, st := range sc.Steps {
			if st.Update != nil {
				st.Update.Patch = bytes.ReplaceAll(st.Update.Patch, []byte(`"`+from), []byte(`"`+to))
			}
		}
	}
}

// CorpusImages lists the images of the corpus registry the scenarios' pods name, sorted.
func CorpusImages(scenarios []*Scenario) []string {
	seen := map[string]bool{}
	for _, sc := range scenarios {
		for _, p := range sc.Pods {
			forEachImage(&p.Spec, func(image *string) {
				if strings.HasPrefix(*image, CorpusRegistry+"/") {
					seen[*image] = true
				}
			})
		}
	}
	out := make([]string, 0, len(seen))
	for im := range seen {
		out = append(out, im)
	}
	sort.Strings(out)
	return out
}

func forEachImage(spec *v1.PodSpec, f func(*string)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i].Image)
	}
	for i := range spec.Containers {
		f(&spec.Containers[i].Image)
	}
	for i := range spec.EphemeralContainers {
		f(&spec.EphemeralContainers[i].Image)
	}
}
