# Sourced by the steps that need a program CI may lack: `debian_install COMMAND PACKAGE...`
# installs Debian's PACKAGEs when COMMAND is not on the PATH (CI runs as root; elsewhere it
# says what to install and fails).
debian_install() {
  local command=$1
  shift
  command -v "$command" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$command is missing; install $* (as root)" >&2
    return 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
