#!/usr/bin/env bash
# Build the pinned oracle tools into a LOCALBIN (default bin/ at the repository root), like kubebuilder's
# Makefile: kube-apiserver and etcd from their Go modules, controller-gen, kubebuilder and helm by
# `go install`. Versions come from hack/oracles/versions.env only. A stamp file skips the work when the
# versions and this script are unchanged and every binary is there; Go's module and build caches make a
# rebuild after a version bump cheap.
#
#   hack/oracles/build.sh [LOCALBIN]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
localbin="$(mkdir -p "${1:-$root/bin}" && cd "${1:-$root/bin}" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
tools=(kube-apiserver etcd controller-gen kubebuilder helm olm-validate)

stamp="$localbin/.oracles.stamp"
want="$(cat "$here/versions.env" "$here/build.sh" "$here"/*/main.go | sha256sum | cut -d' ' -f1)"
have_all=1
for t in "${tools[@]}"; do [ -x "$localbin/$t" ] || have_all=0; done
if [ "$have_all" = 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "oracles: up to date in $localbin"
  exit 0
fi
command -v go >/dev/null || { echo "oracles: go is not installed (needed to build the oracle tools)" >&2; exit 2; }
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0

# A module folder outside the source tree: go.mod/go.sum are derived from versions.env at every build.
work="$localbin/.oracles-src"
rm -rf "$work" && mkdir -p "$work"

build_module() {  # name, module path, ldflags, requirement lines...
  local name="$1" module="$2" ldflags="$3"; shift 3
  local dir="$work/$name"
  mkdir -p "$dir" && cp "$here/$name/main.go" "$dir/"
  (cd "$dir" && go mod init "$module" >/dev/null 2>&1 && for line in "$@"; do echo "$line" >>go.mod; done \
    && go mod tidy >/dev/null && echo "oracles: building $name" && go build -trimpath -ldflags "$ldflags" -o "$localbin/$name" .)
}

# k8s.io/kubernetes is not meant to be required as a module: its go.mod replaces every staging module
# (k8s.io/api, k8s.io/apiserver, ...) with ./staging. Pin each of them to the matching release.
kube_mod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
staging_version="v0.${KUBERNETES_VERSION#v1.}"
mapfile -t replaces < <(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging_version"'#p' "$kube_mod")
[ "${#replaces[@]}" -gt 10 ] || { echo "oracles: found no staging replaces in $kube_mod" >&2; exit 1; }
# /version answers the release, as an official build's does (clients compare it)
minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
version_ldflags="-X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
build_module kube-apiserver pyop.dev/oracles/kube-apiserver "$version_ldflags" "require k8s.io/kubernetes $KUBERNETES_VERSION" "${replaces[@]}"
build_module etcd pyop.dev/oracles/etcd "" "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
# operator-sdk's bundle validators (operator-framework/api pkg/validation) behind a tiny main
build_module olm-validate pyop.dev/oracles/olm-validate "" "require github.com/operator-framework/api $OPERATOR_FRAMEWORK_API_VERSION"

echo "oracles: installing controller-gen, kubebuilder, helm"
GOBIN="$localbin" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
GOBIN="$localbin" go install "sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION"
GOBIN="$localbin" go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
rm -rf "$work"
echo "$want" >"$stamp"
for t in "${tools[@]}"; do printf 'oracles: %-15s %s\n' "$t" "$localbin/$t"; done
