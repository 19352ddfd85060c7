package server

import (
	"encoding/json"
	"net/http"
)

// ConfigzRoute serves /configz: the effective configuration as JSON, one object per section
// (the kubelet answers {"kubeletconfig": {...}}). It is computed once: settings do not change
// while vk-cri runs.
func ConfigzRoute(sections map[string]any) Registrar {
	body, err := json.Marshal(sections)
	return func(m Mux) {
		m.Handle("/configz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			if err != nil {
				http.Error(w, "configz: "+err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}))
	}
}

// MetricsRoute serves /metrics with h (the Prometheus handler of vk-cri's own metrics).
func MetricsRoute(h http.Handler) Registrar {
	return func(m Mux) { m.Handle("/metrics", h) }
}
