package translate

import "strings"

// expandVars replaces $(NAME) references with the values lookup knows, as the kubelet does in
// env values, command and args: an unknown name stays as written, "$$" is a literal "$", and a
// "$" that starts no reference is kept.
func expandVars(in string, lookup func(string) (string, bool)) string {
	if !strings.Contains(in, "$") {
		return in
	}
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		if in[i] != '$' || i+1 == len(in) {
			b.WriteByte(in[i])
			continue
		}
		switch in[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(in[i+2:], ')')
			if end < 0 {
				// No closing parenthesis: the "$(" is plain text.
				b.WriteString("$(")
				i++
				continue
			}
			name := in[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// EnvLookup finds a name in the first of the maps that has it.
func EnvLookup(maps ...map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// ExpandAll expands each string of a command or args list.
func ExpandAll(list []string, lookup func(string) (string, bool)) []string {
	if len(list) == 0 {
		return list
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expandVars(s, lookup)
	}
	return out
}
