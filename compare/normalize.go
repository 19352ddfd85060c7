package compare

import (
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// NormalizePod reduces a pod to the parts of its status that two correct node agents must agree
// on: the phase, the pod's reason and whether it has a message, the conditions (type, status,
// reason; sorted by type) and, per container (init, regular and ephemeral; in that order, each
// sorted by name), the state kind with its reason and exit code, ready, started, the restart
// count and the last termination's reason and exit code. Times, IDs, images, IPs, messages and
// everything else volatile are left out. It is a pure function of the pod.
func NormalizePod(pod *v1.Pod) PodSnapshot {
	st := pod.Status
	s := PodSnapshot{
		Phase:      string(st.Phase),
		Reason:     st.Reason,
		HasMessage: strings.TrimSpace(st.Message) != "",
	}
	if s.Phase == "" {
		s.Phase = "(none)"
	}
	for _, c := range st.Conditions {
		s.Conditions = append(s.Conditions, ConditionSnapshot{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason})
	}
	sort.SliceStable(s.Conditions, func(i, j int) bool { return s.Conditions[i].Type < s.Conditions[j].Type })
	s.Containers = append(s.Containers, containerSnapshots("init", st.InitContainerStatuses)...)
	s.Containers = append(s.Containers, containerSnapshots("regular", st.ContainerStatuses)...)
	s.Containers = append(s.Containers, containerSnapshots("ephemeral", st.EphemeralContainerStatuses)...)
	return s
}

func containerSnapshots(kind string, statuses []v1.ContainerStatus) []ContainerSnapshot {
	var out []ContainerSnapshot
	for _, cs := range statuses {
		c := ContainerSnapshot{
			Name:         cs.Name,
			Kind:         kind,
			State:        stateString(cs.State),
			Ready:        cs.Ready,
			RestartCount: cs.RestartCount,
		}
		if cs.Started != nil {
			v := *cs.Started
			c.Started = &v
		}
		if cs.LastTerminationState.Terminated != nil {
			c.LastState = stateString(cs.LastTerminationState)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func stateString(s v1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		r := "terminated"
		if s.Terminated.Reason != "" {
			r += ":" + s.Terminated.Reason
		}
		return r + " exit=" + strconv.Itoa(int(s.Terminated.ExitCode))
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		if s.Waiting.Reason != "" {
			return "waiting:" + s.Waiting.Reason
		}
		return "waiting"
	}
	return "none"
}

// Volatile lists the strings of a run that differ between the two sides and between runs; the
// comparison gives both sides the same Volatile (both namespaces, both node names, the UIDs of
// both sides' pods) so that normalisation is symmetric.
type Volatile struct {
	Namespaces []string // replaced anywhere by <namespace>
	Nodes      []string // replaced by <node> where not part of a longer alphanumeric word
	UIDs       []string // replaced anywhere by <uid>
	// Registry is the registry the scenarios' images were retargeted to (--image-registry):
	// written back as the corpus's own (CorpusRegistry) before anything else, so that a record
	// does not depend on which registry served the images.
	Registry string
}

// Placeholders written by NormalizeText.
const (
	phNamespace   = "<namespace>"
	phNode        = "<node>"
	phUID         = "<uid>"
	phContainerID = "<container-id>"
	phDigest      = "<digest>"
	phHex         = "<hex>"
	phTime        = "<time>"
	phIP          = "<ip>"
	phPort        = "<port>"
	phRV          = "<rv>"
	phHash        = "<hash>"
	phSuffix      = "<suffix>"
	phDuration    = "<duration>"
)

// The alphabet of Kubernetes' random name suffixes and pod-template hashes (no vowels, no
// look-alike digits).
const k8sRand = `[bcdfghjklmnpqrstvwxz2456789]`

var (
	reContainerID = regexp.MustCompile(`[a-z][a-z0-9+.-]*://[0-9a-f]{12,}`)
	reDigest      = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	reUUID        = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reLongHex     = regexp.MustCompile(`[0-9a-f]{32,}`)
	reTimeISO     = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?: [+-]\d{4})?(?: [A-Z]{2,5})?(?: m=[+-]\d+\.\d+)?`)
	reTimeDate    = regexp.MustCompile(`(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? +(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}(?: [A-Z]{2,5})? \d{4}`)
	reTimeRFC1123 = regexp.MustCompile(`(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2}(?: [A-Z]{2,5}| [+-]\d{4})?`)
	reClock       = regexp.MustCompile(`\d{1,2}:\d{2}:\d{2}(?:\.\d+)?`)
	reIPv4        = regexp.MustCompile(`(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?`)
	reIPv6        = regexp.MustCompile(`(?i)[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}`)
	reRV          = regexp.MustCompile(`(?i)(resource ?version[\\"':= ]{0,4})\d+`)
	reHashSuffix  = regexp.MustCompile(`-` + k8sRand + `{8,10}-` + k8sRand + `{5}`)
	reSuffix      = regexp.MustCompile(`-` + k8sRand + `{5}`)
	reDuration    = regexp.MustCompile(`(?:\d+h)?(?:\d+m)?\d+\.\d+(?:ms|µs|us|ns|s|m|h)|\d+(?:ms|µs|us|ns)`)
)

// NormalizeText replaces the volatile parts of a text (a log, an exec output, an error or event
// message) with placeholders, in this order:
//
//   - the run's namespaces → <namespace>, pod UIDs → <uid>, node names → <node> (node names only
//     as whole words: not inside a longer run of letters and digits);
//   - container IDs (runtime://hex) → <container-id>, sha256 digests → sha256:<digest>, UUIDs →
//     <uid>, other runs of 32+ hex digits → <hex>;
//   - timestamps (RFC 3339 and Go's time format, date(1)'s and RFC 1123 formats, bare hh:mm:ss)
//     → <time>;
//   - IPv4 addresses → <ip> (with a port: <ip>:<port>), IPv6 addresses → <ip>;
//   - resource versions ("resourceVersion: 123") → <rv>;
//   - pod-template hashes with random suffixes (-<hash>-<suffix>) and random name suffixes of
//     five characters of Kubernetes' random alphabet → -<suffix>, when they end a name;
//   - measured durations (fractional, or in ms/µs/ns: "1.25s", "350ms") → <duration>; whole
//     seconds, minutes and hours are kept, as they are usually configured values (back-off 10s).
//
// It is a pure function of its arguments.
func NormalizeText(s string, v Volatile) string {
	if s == "" {
		return s
	}
	if r := strings.TrimSuffix(v.Registry, "/"); r != "" && r != CorpusRegistry {
		s = strings.ReplaceAll(s, r+"/", CorpusRegistry+"/")
	}
	for _, ns := range longestFirst(v.Namespaces) {
		s = strings.ReplaceAll(s, ns, phNamespace)
	}
	for _, uid := range longestFirst(v.UIDs) {
		s = strings.ReplaceAll(s, uid, phUID)
	}
	for _, n := range longestFirst(v.Nodes) {
		s = replaceWord(s, n, phNode)
	}
	s = reContainerID.ReplaceAllString(s, phContainerID)
	s = reDigest.ReplaceAllString(s, "sha256:"+phDigest)
	s = reUUID.ReplaceAllString(s, phUID)
	s = replaceBounded(s, reLongHex, isAlnum, func(string) string { return phHex })
	s = reTimeISO.ReplaceAllString(s, phTime)
	s = reTimeDate.ReplaceAllString(s, phTime)
	s = reTimeRFC1123.ReplaceAllString(s, phTime)
	s = replaceBounded(s, reClock, isDigitOrColon, func(string) string { return phTime })
	s = replaceBounded(s, reIPv4, isAlnumOrDot, func(m string) string {
		if strings.Contains(m, ":") {
			return phIP + ":" + phPort
		}
		return phIP
	})
	s = replaceBounded(s, reIPv6, isAlnumOrColon, func(m string) string {
		if ip := net.ParseIP(m); ip != nil && strings.Contains(m, ":") {
			return phIP
		}
		return m
	})
	s = reRV.ReplaceAllString(s, "${1}"+phRV)
	s = replaceEndOfName(s, reHashSuffix, "-"+phHash+"-"+phSuffix)
	s = replaceEndOfName(s, reSuffix, "-"+phSuffix)
	s = replaceBounded(s, reDuration, isAlnumOrDot, func(string) string { return phDuration })
	return s
}

func longestFirst(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
func isAlnumOrDot(b byte) bool   { return isAlnum(b) || b == '.' }
func isAlnumOrColon(b byte) bool { return isAlnum(b) || b == ':' }
func isDigitOrColon(b byte) bool { return b >= '0' && b <= '9' || b == ':' || b == '.' }

// replaceBounded replaces the matches of re that are not glued to a neighbouring character for
// which inWord is true. A trailing "." is allowed after a match when it ends a sentence (is not
// followed by a word character).
func replaceBounded(s string, re *regexp.Regexp, inWord func(byte) bool, repl func(string) string) string {
	locs := re.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if start > 0 && inWord(s[start-1]) {
			continue
		}
		if end < len(s) && inWord(s[end]) {
			if !(s[end] == '.' && (end+1 == len(s) || !isAlnum(s[end+1]))) {
				continue
			}
		}
		b.WriteString(s[last:start])
		b.WriteString(repl(s[start:end]))
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceWord replaces occurrences of word that are not part of a longer alphanumeric run.
func replaceWord(s, word, repl string) string {
	if word == "" {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(word)
		if (i > 0 && isAlnum(s[i-1])) || (end < len(s) && isAlnum(s[end])) {
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s = s[end:]
	}
}

// replaceEndOfName replaces matches that follow a letter or digit (the start of the name) and
// end it (are not followed by a letter, digit or "-").
func replaceEndOfName(s string, re *regexp.Regexp, repl string) string {
	locs := re.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if start == 0 || !isAlnum(s[start-1]) {
			continue
		}
		if end < len(s) && (isAlnum(s[end]) || s[end] == '-') {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(repl)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}
