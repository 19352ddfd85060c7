package streaming

import (
	"net/url"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// FuzzLogQuery parses fuzzed /containerLogs queries. A query never panics; one that parses and
// validates keeps the API's bounds; and it says the same once encoded again by client-go's
// parameter codec (as the API server encodes the options it proxies to a node). Seeds:
// testdata/fuzz/FuzzLogQuery.
func FuzzLogQuery(f *testing.F) {
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		opts, err := parseLogOptions(q)
		if err != nil {
			return
		}
		if err := validateLogOptions(opts); err != nil {
			return
		}
		switch {
		case opts.TailLines != nil && *opts.TailLines < 0:
			t.Fatalf("%q: negative tailLines %d accepted", rawQuery, *opts.TailLines)
		case opts.LimitBytes != nil && *opts.LimitBytes < 1:
			t.Fatalf("%q: limitBytes %d accepted", rawQuery, *opts.LimitBytes)
		case opts.SinceSeconds != nil && *opts.SinceSeconds < 1:
			t.Fatalf("%q: sinceSeconds %d accepted", rawQuery, *opts.SinceSeconds)
		case opts.SinceSeconds != nil && opts.SinceTime != nil:
			t.Fatalf("%q: both sinceSeconds and sinceTime accepted", rawQuery)
		}
		if opts.Stream != nil && *opts.Stream != v1.LogStreamAll && *opts.Stream != v1.LogStreamStdout && *opts.Stream != v1.LogStreamStderr {
			t.Fatalf("%q: stream %q accepted", rawQuery, *opts.Stream)
		}
		encoded, err := scheme.ParameterCodec.EncodeParameters(opts, v1.SchemeGroupVersion)
		if err != nil {
			t.Fatalf("%q: options %+v do not encode: %v", rawQuery, opts, err)
		}
		again, err := parseLogOptions(encoded)
		if err != nil {
			t.Fatalf("%q: encoded again as %q, does not parse: %v", rawQuery, encoded.Encode(), err)
		}
		// The query form of a time has whole seconds (RFC 3339).
		want := opts.DeepCopy()
		if want.SinceTime != nil {
			want.SinceTime.Time = want.SinceTime.Truncate(1e9).UTC()
		}
		if again.SinceTime != nil {
			again.SinceTime.Time = again.SinceTime.UTC()
		}
		want.TypeMeta, again.TypeMeta = v1.PodLogOptions{}.TypeMeta, v1.PodLogOptions{}.TypeMeta
		if !reflect.DeepEqual(want, again) {
			t.Fatalf("%q: parsed %+v, encoded %q parses as %+v", rawQuery, want, encoded.Encode(), again)
		}
	})
}
