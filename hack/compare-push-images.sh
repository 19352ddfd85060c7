#!/usr/bin/env bash
# compare-push-images.sh REGISTRY: copies the images the compare corpus uses from
# the local stack's registry to REGISTRY (one the cluster under comparison can pull from), under
# the same repository paths. Then run `vk-cri compare --image-registry REGISTRY ...`. Images the
# corpus names on purpose without serving them (scenarios of failed pulls) are skipped. The
# source is the plain-http loopback registry, so the copy runs with crane's Insecure option, which
# also lets the target be plain http or use a certificate this machine does not trust.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"

target=${1:?usage: compare-push-images.sh REGISTRY}
[[ -x "$REPO_DIR/bin/vk-cri" ]] || die "bin/vk-cri is missing: run make build"

copier="$TOOLS_DIR/imagecopy"
mkdir -p "$TOOLS_DIR"
if [[ ! -x "$copier" || -n "$(find "$REPO_DIR/hack/tools" -type f -newer "$copier" -print -quit)" ]]; then
  log "building the image copier into $copier"
  (cd "$REPO_DIR/hack/tools" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -mod=readonly -buildvcs=false \
    -trimpath -ldflags '-s -w' -o "$copier.tmp" ./imagecopy) || { rm -f "$copier.tmp"; die "building imagecopy failed"; }
  mv -f "$copier.tmp" "$copier"
fi

pushed=0 skipped=0
while IFS= read -r image; do
  repo_tag=${image#"$REGISTRY"/}
  repo=${repo_tag%:*} tag=${repo_tag##*:}
  if ! curl -sfI -o /dev/null "http://$REGISTRY/v2/$repo/manifests/$tag" \
       -H 'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'; then
    log "skipping $image: the local registry does not serve it (a scenario's failed pull)"
    skipped=$((skipped + 1))
    continue
  fi
  log "copying $image to ${target%/}/$repo_tag"
  "$copier" -insecure "$image" "${target%/}/$repo_tag" || die "copying $image to $target failed"
  pushed=$((pushed + 1))
done < <("$REPO_DIR/bin/vk-cri" compare --list-images --scenarios "$REPO_DIR/test/compare")
log "$pushed images pushed to $target, $skipped skipped"
