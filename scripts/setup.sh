#!/usr/bin/env bash
# Installs what pm2lat needs to build and test on a Debian 12 machine. The CUDA toolkit is
# expected in its standard location (/usr/local/cuda): headers only, no GPU needed.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev libnanoflann-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev            # libFuzzer targets and the fuzz preset
  clang-tidy                          # scripts/tidy.sh (static checks of changed files)
  time                                # GNU time: scripts/measure-memory.sh
  python3                             # scripts/*.py: the error-band estimate (and its test)
  chromium                            # the HTML report test renders in headless Chromium
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "warning: CUDA toolkit headers not found in /usr/local/cuda: libpm2lat.so will not be built" >&2
fi
echo "setup: all build dependencies present"
