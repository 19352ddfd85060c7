# Helpers for the hack/build-*.sh scripts that build a binary from the Go module proxy in a
# throwaway module under the cache directory (never in the project's go.mod). Sourced after
# lib/common.sh, never run.

# throwaway_module DIR MODULE VERSION PACKAGE...: a module in DIR that requires MODULE@VERSION and
# imports PACKAGE... (so that go mod tidy keeps what they need); go.sum kept between runs.
throwaway_module() {
  local dir=$1 module=$2 version=$3; shift 3
  if [[ -f "$dir/go.sum" ]] && grep -q "^require $module $version\$" "$dir/go.mod" 2>/dev/null; then
    return 0
  fi
  mkdir -p "$dir"
  printf 'module vkcri.local/build\n\ngo 1.26\n\nrequire %s %s\n' "$module" "$version" >"$dir/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    local p
    for p in "$@"; do printf '\t_ "%s"\n' "$p"; done
    printf ')\n'
  } >"$dir/tools.go"
  (cd "$dir" && go mod tidy >&2) || die "go mod tidy failed in $dir"
}

# apt_ensure PACKAGE...: installs the Debian packages among PACKAGE... that are not installed
# (one apt-get update first), as the other hack/ scripts do for what they need.
apt_ensure() {
  local p missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  (( ${#missing[@]} )) || return 0
  log "installing ${missing[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
