#!/usr/bin/env bash
# OpenSSH's client tools: the attestation tests make keys with ssh-keygen and sign through a real ssh-agent.
. "$(dirname "$0")/apt.sh"
if ! command -v ssh-keygen >/dev/null || ! command -v ssh-agent >/dev/null || ! command -v ssh-add >/dev/null; then
  apt_install openssh-client || exit 1
fi
echo "tools: $(ssh -V 2>&1)"
