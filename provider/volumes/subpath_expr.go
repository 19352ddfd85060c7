package volumes

import (
	"fmt"
	"sort"
	"strings"
)

// ExpandSubPath expands a subPathExpr the way the kubelet does: $(VAR) is the variable's value,
// $$ is a literal $, anything else is kept. A variable that is not set (or empty) is an error,
// since the volume would otherwise be mounted whole.
func ExpandSubPath(expr string, env map[string]string) (string, error) {
	var b strings.Builder
	missing := map[string]bool{}
	for i := 0; i < len(expr); i++ {
		if expr[i] != '$' || i+1 >= len(expr) {
			b.WriteByte(expr[i])
			continue
		}
		switch next := expr[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(expr[i+2:], ')')
			if end < 0 {
				b.WriteString(expr[i:])
				i = len(expr)
				continue
			}
			name := expr[i+2 : i+2+end]
			v, ok := env[name]
			if !ok || v == "" {
				missing[name] = true
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", fmt.Errorf("missing value for %s", strings.Join(names, ", "))
	}
	return b.String(), nil
}
