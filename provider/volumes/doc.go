// Package volumes sets up the volumes of the pods vk-cri runs, the way the kubelet's volume
// plugins do: each pod gets a directory under the root dir (pods/<uid>/volumes/<plugin>/<name>),
// API-backed volumes (configMap, secret, downwardAPI, projected) are written with the kubelet's
// atomic writer layout so that updates reach running containers, emptyDir and hostPath behave as
// the kubelet's plugins, and everything a pod mounted is torn down when it goes.
//
// One file per volume type; the payloads (what files a volume holds) are computed by pure
// functions, and the Manager executes them on the node.
package volumes
