#!/usr/bin/env bash
# Build the pinned oracle tools into a LOCALBIN (default bin/ at the repository root), like kubebuilder's
# Makefile: kube-apiserver, kube-controller-manager, kube-scheduler and etcd from their Go modules,
# controller-gen, kubebuilder, helm and kwok by `go install`. Versions come from hack/oracles/versions.env
# only. Each tool has a stamp of what it is built from (its version, its main.go, this script): a tool
# whose stamp matches and whose binary is there is skipped, so a version bump rebuilds only the tools it
# names; Go's module and build caches make even those rebuilds cheap.
#
#   hack/oracles/build.sh [LOCALBIN]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
localbin="$(mkdir -p "${1:-$root/bin}" && cd "${1:-$root/bin}" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
kubernetes_tools=(kube-apiserver kube-controller-manager kube-scheduler)
tools=("${kubernetes_tools[@]}" etcd controller-gen kubebuilder helm olm-validate kwok)
stamps="$localbin/.oracles.stamps"

inputs() {  # what a tool is built from: its stamp is the hash of these
  case "$1" in
    kube-apiserver | kube-controller-manager | kube-scheduler) echo "$KUBERNETES_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    olm-validate) echo "$OPERATOR_FRAMEWORK_API_VERSION" ;;
    controller-gen) echo "$CONTROLLER_TOOLS_VERSION" ;;
    kubebuilder) echo "$KUBEBUILDER_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    kwok) echo "$KWOK_VERSION" ;;
  esac
  [ ! -f "$here/$1/main.go" ] || cat "$here/$1/main.go"
  cat "$here/build.sh"
}
stamp_of() { inputs "$1" | sha256sum | cut -d' ' -f1; }
stale=()
for t in "${tools[@]}"; do
  if [ ! -x "$localbin/$t" ] || [ "$(cat "$stamps/$t" 2>/dev/null)" != "$(stamp_of "$t")" ]; then
    stale+=("$t")
  fi
done
if [ ${#stale[@]} = 0 ]; then
  echo "oracles: up to date in $localbin"
  exit 0
fi
is_stale() { [[ " ${stale[*]} " == *" $1 "* ]]; }
done_with() { mkdir -p "$stamps" && stamp_of "$1" >"$stamps/$1"; }
echo "oracles: building ${stale[*]}"
command -v go >/dev/null || { echo "oracles: go is not installed (needed to build the oracle tools)" >&2; exit 2; }
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0

# Module folders outside the source tree: go.mod/go.sum are derived from versions.env at every build.
work="$localbin/.oracles-src"
rm -rf "$work" && mkdir -p "$work"

module() {  # folder, module path, requirement lines...: a module holding the mains of its folder
  local dir="$work/$1" module="$2"; shift 2
  mkdir -p "$dir"
  (cd "$dir" && go mod init "$module" >/dev/null 2>&1 && for line in "$@"; do echo "$line" >>go.mod; done)
}
build_module() {  # name, module path, ldflags, requirement lines...
  local name="$1" module="$2" ldflags="$3"; shift 3
  is_stale "$name" || return 0
  module "$name" "$module" "$@"
  cp "$here/$name/main.go" "$work/$name/"
  (cd "$work/$name" && go mod tidy >/dev/null && echo "oracles: building $name" \
    && go build -trimpath -ldflags "$ldflags" -o "$localbin/$name" .)
  done_with "$name"
}

# k8s.io/kubernetes is not meant to be required as a module: its go.mod replaces every staging module
# (k8s.io/api, k8s.io/apiserver, ...) with ./staging. Pin each of them to the matching release. Its three
# servers are mains of one module, built in one `go build` that compiles their shared packages once.
kubernetes=()
for t in "${kubernetes_tools[@]}"; do is_stale "$t" && kubernetes+=("$t"); done
if [ ${#kubernetes[@]} -gt 0 ]; then
  kube_mod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  staging_version="v0.${KUBERNETES_VERSION#v1.}"
  mapfile -t replaces < <(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging_version"'#p' "$kube_mod")
  [ "${#replaces[@]}" -gt 10 ] || { echo "oracles: found no staging replaces in $kube_mod" >&2; exit 1; }
  # /version answers the release, as an official build's does (clients compare it)
  minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
  version_ldflags="-X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  module kubernetes pyop.dev/oracles/kubernetes "require k8s.io/kubernetes $KUBERNETES_VERSION" "${replaces[@]}"
  for t in "${kubernetes[@]}"; do mkdir -p "$work/kubernetes/$t" && cp "$here/$t/main.go" "$work/kubernetes/$t/"; done
  echo "oracles: building ${kubernetes[*]}"
  (cd "$work/kubernetes" && go mod tidy >/dev/null \
    && go build -trimpath -ldflags "$version_ldflags" -o "$localbin/" "${kubernetes[@]/#/./}")
  for t in "${kubernetes[@]}"; do done_with "$t"; done
fi
build_module etcd pyop.dev/oracles/etcd "" "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
# operator-sdk's bundle validators (operator-framework/api pkg/validation) behind a tiny main
build_module olm-validate pyop.dev/oracles/olm-validate "" "require github.com/operator-framework/api $OPERATOR_FRAMEWORK_API_VERSION"

install() {  # name, package@version
  is_stale "$1" || return 0
  echo "oracles: installing $1"
  GOBIN="$localbin" go install "$2"
  done_with "$1"
}
install controller-gen "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
install kubebuilder "sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION"
install helm "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
# fake nodes for envtest's cluster mode (its own go.mod pins its Kubernetes libraries)
install kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
rm -rf "$work" "$localbin/.oracles.stamp"  # the stamp of the all-or-nothing build before per-tool stamps
for t in "${tools[@]}"; do printf 'oracles: %-24s %s\n' "$t" "$localbin/$t"; done
