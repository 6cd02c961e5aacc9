#!/usr/bin/env bash
# bubblewrap and socat: what Claude Code's sandbox needs on Linux to hold the agent's shell (nightshift's boundary);
# libseccomp2: the library the sandbox's seccomp filter is compiled with (through pyseccomp).
. "$(dirname "$0")/apt.sh"
# ldconfig lives in /sbin (/usr/sbin), which is not on an ordinary user's PATH (Debian, RHEL): asked by its path, else
# the library's usual folders, so a user is never told libseccomp2 is missing when it is installed.
have_libseccomp() {
  local ldconfig
  ldconfig="$(PATH="$PATH:/usr/sbin:/sbin" command -v ldconfig)"
  if [ -n "$ldconfig" ] && "$ldconfig" -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then return 0; fi
  compgen -G '/usr/lib*/libseccomp.so.2*' >/dev/null || compgen -G '/usr/lib/*/libseccomp.so.2*' >/dev/null \
    || compgen -G '/lib*/libseccomp.so.2*' >/dev/null || compgen -G '/lib/*/libseccomp.so.2*' >/dev/null
}
missing=()  # only what is missing is named (or installed)
bwrap="$(command -v bwrap)"  # bash names a file it found but cannot run too: only an executable one counts
[ -n "$bwrap" ] && [ -x "$bwrap" ] || missing+=(bubblewrap)
command -v socat >/dev/null || missing+=(socat)
have_libseccomp || missing+=(libseccomp2)
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}" || exit 1
fi
echo "tools: bubblewrap $(bwrap --version 2>/dev/null | cut -d' ' -f2), socat $(socat -V 2>/dev/null | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
