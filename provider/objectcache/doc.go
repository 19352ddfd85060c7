// Package objectcache serves the ConfigMaps and Secrets that pods refer to (volumes, env,
// envFrom, imagePullSecrets) from one watch per object, as the kubelet's watch-based ConfigMap
// and Secret managers do: a pod registers its references on each sync and releases them once
// it has terminated, and every read in between (a volume refresh, a container restart in
// CrashLoopBackOff) is served from the watch's cache instead of the API server.
package objectcache
