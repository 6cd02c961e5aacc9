# Sourced helper: apt_install PKG... installs Debian packages when root, else says what to run.
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    if [ ! -f /tmp/.nightshift-apt-updated ]; then apt-get update -qq >/dev/null 2>&1 && touch /tmp/.nightshift-apt-updated; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
      || { echo "install-tools: apt-get install $* failed; install it by hand" >&2; return 1; }
  else
    echo "install-tools: missing $*; install it (e.g. sudo apt-get install $*)" >&2; return 1
  fi
}
