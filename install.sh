#!/usr/bin/env bash
# Install or upgrade kenning for the current user, then (re)start the daemon.
#   ./install.sh              install (or upgrade), then run the daemon as a user service
#                             (systemd --user / launchd), or as a detached process where
#                             neither is available; a running daemon is restarted onto the new code
#   ./install.sh --foreground install, then run `ken daemon` in this terminal
# The daemon starts on the embedded defaults: no network, no Ollama, no sources until you add one
# with `ken sources add PATH`.
set -euo pipefail
# Under a loose umask (000) pip would leave kenning's code writable by other users, who
# could then run anything as this one; a stricter umask is kept as it is.
umask g-w,o-w

here=$(cd "$(dirname "$0")" && pwd)
prefix=${KENNING_PREFIX:-$HOME/.local/lib/kenning}
bindir=${KENNING_BIN:-$HOME/.local/bin}
foreground=false
[ "${1:-}" = "--foreground" ] && foreground=true

# A Python kenning runs on (3.11 or newer) with pip in it.
usable() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && "$1" -m pip --version >/dev/null 2>&1
}

if usable "$prefix/bin/python"; then
  echo "upgrading kenning in $prefix"
else
  if ! command -v python3 >/dev/null || ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "kenning needs Python 3.11 or newer as python3 (found: $(command -v python3 >/dev/null && python3 --version 2>&1 || echo none));" \
      "install one, then run ./install.sh again" >&2
    exit 1
  fi
  echo "installing kenning into $prefix"
  # A venv an earlier run left half made (python3-venv missing: no pip in it) or made with
  # an older Python is made anew: kept, it failed every later run with "pip: No such file".
  clear=
  [ -f "$prefix/pyvenv.cfg" ] && clear=--clear
  if ! python3 -m venv $clear "$prefix"; then
    echo "could not make a virtual environment in $prefix (the lines above say why): for a folder you cannot" \
      "write in, set KENNING_PREFIX to one you can; for a missing venv module, on Debian or Ubuntu:" \
      "sudo apt install python3-venv; then run ./install.sh again" >&2
    exit 1
  fi
fi
"$prefix/bin/python" -m pip install --quiet --upgrade pip
"$prefix/bin/python" -m pip install --quiet --upgrade "$here"
if ! { mkdir -p "$bindir" && ln -sfn "$prefix/bin/ken" "$bindir/ken"; }; then
  echo "could not put ken in $bindir: set KENNING_BIN to a folder you can write in, on your PATH," \
    "then run ./install.sh again" >&2
  exit 1
fi
echo "ken is at $bindir/ken ($("$bindir/ken" --version))"

if $foreground; then
  "$bindir/ken" stop
  exec "$bindir/ken" daemon
fi

# Installs or refreshes the user service and restarts the daemon under it (or, without a
# service manager, restarts it as a detached process): an upgrade runs the new code.
"$bindir/ken" service install

echo
case ":$PATH:" in
  *":$bindir:"*)
    # An older ken (a pip install of its own) earlier on the PATH is the one a shell runs.
    first=$(command -v ken || true)
    if [ "$first" != "$bindir/ken" ]; then
      echo "another ken comes first on your PATH: $first; remove it, or put $bindir before its folder in PATH"
      echo
    fi
    ;;
  *)
    echo "$bindir is not on your PATH; add this line to ~/.bashrc or ~/.zshrc, then open a new shell:"
    echo "  export PATH=\"$bindir:\$PATH\""
    echo
    ;;
esac
echo "next:"
echo "  ken sources add ~/notes --wait     # index a folder; follow it until it is searchable"
echo "  ken search \"what you are looking for\""
echo "  ken doctor                         # if anything looks wrong"
