package streaming

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestParseLogOptions(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	cases := []struct {
		query   string
		want    v1.PodLogOptions
		wantErr bool
	}{
		{"", v1.PodLogOptions{}, false},
		{"follow=true&timestamps=1&previous=false", v1.PodLogOptions{Follow: true, Timestamps: true}, false},
		{"follow=", v1.PodLogOptions{Follow: true}, false},
		{"tailLines=5&limitBytes=100&sinceSeconds=60", v1.PodLogOptions{TailLines: ptr.To[int64](5), LimitBytes: ptr.To[int64](100), SinceSeconds: ptr.To[int64](60)}, false},
		{"tail=7", v1.PodLogOptions{TailLines: ptr.To[int64](7)}, false},
		{"tail=all&tailLines=3", v1.PodLogOptions{}, false},
		{"sinceTime=2026-11-30T08:00:00Z", v1.PodLogOptions{SinceTime: &since}, false},
		{"container=c&stream=Stdout", v1.PodLogOptions{Container: "c", Stream: ptr.To("Stdout")}, false},
		{"tailLines=x", v1.PodLogOptions{}, true},
		{"sinceTime=yesterday", v1.PodLogOptions{}, true},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseLogOptions(q)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if err == nil && got.SinceTime != nil {
				got.SinceTime = &metav1.Time{Time: got.SinceTime.UTC()}
			}
			if err == nil && !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got %+v, want %+v", *got, c.want)
			}
		})
	}
}

func TestValidateLogOptions(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name string
		in   v1.PodLogOptions
		ok   bool
	}{
		{"empty", v1.PodLogOptions{}, true},
		{"tail 0", v1.PodLogOptions{TailLines: ptr.To[int64](0)}, true},
		{"negative tail", v1.PodLogOptions{TailLines: ptr.To[int64](-1)}, false},
		{"limit 0", v1.PodLogOptions{LimitBytes: ptr.To[int64](0)}, false},
		{"since 0", v1.PodLogOptions{SinceSeconds: ptr.To[int64](0)}, false},
		{"both since", v1.PodLogOptions{SinceSeconds: ptr.To[int64](5), SinceTime: &now}, false},
		{"stream All with tail", v1.PodLogOptions{Stream: ptr.To("All"), TailLines: ptr.To[int64](1)}, true},
		{"stream Stderr with tail", v1.PodLogOptions{Stream: ptr.To("Stderr"), TailLines: ptr.To[int64](1)}, false},
		{"unknown stream", v1.PodLogOptions{Stream: ptr.To("Both")}, false},
	}
	for _, c := range cases {
		if err := validateLogOptions(&c.in); (err == nil) != c.ok {
			t.Errorf("%s: error %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
