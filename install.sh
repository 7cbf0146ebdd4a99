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

if [ -x "$prefix/bin/python" ]; then
  echo "upgrading kenning in $prefix"
else
  echo "installing kenning into $prefix"
  python3 -m venv "$prefix"
fi
"$prefix/bin/pip" install --quiet --upgrade pip
"$prefix/bin/pip" install --quiet --upgrade "$here"
mkdir -p "$bindir"
ln -sf "$prefix/bin/ken" "$bindir/ken"
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
  *":$bindir:"*) ;;
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
