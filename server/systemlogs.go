package server

import "net/http"

// SystemLogsRoute serves /logs/ as the kubelet's system log handler does: the files under dir
// (the kubelet serves /var/log), read-only, to callers the authorizer lets use nodes/log.
func SystemLogsRoute(dir string) Registrar {
	files := http.StripPrefix("/logs/", http.FileServer(http.Dir(dir)))
	return func(m Mux) {
		m.Handle("/logs/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			files.ServeHTTP(w, r)
		}))
	}
}
