#ddev-generated
# Shared by the ai-eval-* host commands (DDEV skips files whose names start with a dot).
# Each command runs `apg <command>` on the host against this DDEV project with the ddev driver;
# apg reaches the site with `ddev exec drush`, so exit codes stay faithful there.
# DDEV reports any non-zero exit of a custom command as 1: read the APG_* tokens on stderr.

apg_exec() {
  local command=$1
  shift
  if [ -z "${DDEV_APPROOT:-}" ]; then
    echo "APG_USAGE run this through ddev (ddev ai-eval-$command), which sets DDEV_APPROOT" >&2
    exit 2
  fi
  local apg=${AI_PG_APG:-apg}
  if ! command -v "$apg" >/dev/null 2>&1; then
    echo "APG_APG_MISSING '$apg' not found on the host; install ai_proving_ground on the host" \
      "(pipx install <checkout or wheel>) or set AI_PG_APG to its apg script" >&2
    exit 2
  fi
  cd "$DDEV_APPROOT"
  export AI_PG_SITE_DRIVER=${AI_PG_SITE_DRIVER:-ddev}
  exec "$apg" "$command" --approot "$DDEV_APPROOT" "$@"
}
