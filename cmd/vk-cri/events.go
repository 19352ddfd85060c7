package main

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// quietRecorder swallows the events virtual-kubelet's pod controller records about its calls
// into the provider (ProviderCreateSuccess and the like). The kubelet records no such events;
// the provider records the kubelet's own (Pulling, Created, Started, Killing, ...).
type quietRecorder struct{}

func (quietRecorder) Event(runtime.Object, string, string, string)          {}
func (quietRecorder) Eventf(runtime.Object, string, string, string, ...any) {}
func (quietRecorder) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...any) {
}
