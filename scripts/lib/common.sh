# Shared by scripts/setup and scripts/test: installs what is missing and
# configures/builds the project. Quiet when there is nothing to do.

PIPEC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PIPEC_BUILD="${PIPEC_BUILD:-$PIPEC_ROOT/build}"

pipec_jobs() { nproc 2>/dev/null || echo 2; }

# Debian packages the build and the tests need.
pipec_install_deps() {
  local pkgs=(antlr4 libantlr4-runtime-dev llvm-14-dev llvm-14-tools doctest-dev
              zlib1g-dev libsqlite3-dev cmake g++ ninja-build python3 clang-format-14)
  local missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
      missing+=("$p")
  done
  command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "pipec: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq >/dev/null &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "pipec: could not install ${missing[*]}" >&2; return 1; }
}

# pipec_build DIR [cmake args...]: configure once, then build.
pipec_build() {
  local dir="$1"; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$PIPEC_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" \
      >"$dir.configure.log" 2>&1 ||
      { cat "$dir.configure.log" >&2; return 1; }
  fi
  cmake --build "$dir" -j "$(pipec_jobs)" -- --quiet ||
    cmake --build "$dir" -j 1
}
