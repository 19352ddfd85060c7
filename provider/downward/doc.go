// Package downward resolves the downward API: the pod fields (fieldRef) and container resources
// (resourceFieldRef) that env variables and downwardAPI volumes expose, with the kubelet's
// values and formatting. Everything here is pure: the caller supplies what only the node knows
// (pod and host IPs, node allocatable).
package downward
