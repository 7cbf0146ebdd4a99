#!/usr/bin/env bash
# Install kenning for the current user and start the daemon.
#   ./install.sh              install, then run the daemon as a user service (systemd / launchd),
#                             or in the foreground where neither is available
#   ./install.sh --foreground install, then run `ken daemon` in this terminal
# The daemon starts on the embedded defaults: no network, no Ollama, no sources until you add one
# with `ken sources add PATH`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prefix=${KENNING_PREFIX:-$HOME/.local/lib/kenning}
bindir=${KENNING_BIN:-$HOME/.local/bin}
foreground=false
[ "${1:-}" = "--foreground" ] && foreground=true

echo "installing kenning into $prefix"
python3 -m venv "$prefix"
"$prefix/bin/pip" install --quiet --upgrade pip
"$prefix/bin/pip" install --quiet --upgrade "$here"
mkdir -p "$bindir"
ln -sf "$prefix/bin/ken" "$bindir/ken"
echo "ken is at $bindir/ken"

if ! $foreground; then
  case "$(uname -s)" in
    Linux)
      if command -v systemctl >/dev/null && systemctl --user show-environment >/dev/null 2>&1; then
        unit_dir=${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user
        mkdir -p "$unit_dir"
        cp "$here/systemd/kenning.service" "$unit_dir/kenning.service"
        systemctl --user daemon-reload
        systemctl --user enable --now kenning.service
        echo "kenning is running as a systemd user service (journalctl --user -u kenning)"
        exit 0
      fi
      ;;
    Darwin)
      agents=$HOME/Library/LaunchAgents
      mkdir -p "$agents" "$HOME/Library/Logs"
      sed "s#/Users/USERNAME#$HOME#g" "$here/systemd/com.kenning.daemon.plist" > "$agents/com.kenning.daemon.plist"
      launchctl bootout "gui/$(id -u)/com.kenning.daemon" 2>/dev/null || true
      launchctl bootstrap "gui/$(id -u)" "$agents/com.kenning.daemon.plist"
      echo "kenning is running as a launchd agent (log: ~/Library/Logs/kenning.log)"
      exit 0
      ;;
  esac
  echo "no user service manager found; running the daemon in the foreground (Ctrl-C stops it)"
fi
exec "$bindir/ken" daemon
