package translate

import (
	"reflect"
	"testing"
)

func TestExpandVars(t *testing.T) {
	vars := EnvLookup(map[string]string{"A": "1", "EMPTY": "", "B": "$(A)"}, map[string]string{"A": "shadowed", "SVC": "10.0.0.1"})
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "1"},
		{"x$(A)y$(SVC)z", "x1y10.0.0.1z"},
		{"$(EMPTY)!", "!"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(A)", "$(A)"},
		{"$$$(A)", "$1"},
		{"$$", "$"},
		{"$", "$"},
		{"a$", "a$"},
		{"$x", "$x"},
		{"$(A", "$(A"},
		{"$(", "$("},
		{"$()", "$()"},
		{"$(B)", "$(A)"}, // values are not expanded twice
		{"ünï$(A)cödé", "ünï1cödé"},
	}
	for _, tc := range cases {
		if got := expandVars(tc.in, vars); got != tc.want {
			t.Errorf("expandVars(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandAll(t *testing.T) {
	vars := EnvLookup(map[string]string{"X": "y"})
	if got := ExpandAll(nil, vars); got != nil {
		t.Errorf("ExpandAll(nil) = %v", got)
	}
	if got, want := ExpandAll([]string{"echo", "$(X)", "$$(X)"}, vars), []string{"echo", "y", "$(X)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandAll = %v, want %v", got, want)
	}
}
