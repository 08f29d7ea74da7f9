#ddev-generated
# Shared by the claude-code and codex adapters (sourced, never run: dot files are not adapters).
# Needs APG_RUN_DIR, APG_SITE, APG_APPROOT and APG_PROMPT_FILE from `apg run`.

# A per-run bin directory holding `apg`, which runs exactly this bed's site command for
# `apg site ...` (and refuses anything else), so the agent's `apg site` is the right one
# whatever its PATH held. Prints the directory.
apg_site_bin() {
  local bin="${APG_RUN_DIR}/bin"
  mkdir -p "${bin}" || return 1
  {
    echo '#!/usr/bin/env bash'
    echo "# apg for the agent of run ${APG_RUN_ID:-}: only 'apg site ...', this bed's site command."
    echo 'if [ "${1:-}" != site ]; then'
    echo '  echo "APG_USAGE only '\''apg site ...'\'' is available to the agent (the bed'\''s site command)" >&2'
    echo '  exit 2'
    echo 'fi'
    echo 'shift'
    printf 'export AI_PG_APPROOT=%q\n' "${APG_APPROOT}"
    # APG_SITE is already shell words (shlex.join), ending in "site".
    echo "exec ${APG_SITE} \"\$@\""
  } >"${bin}/apg.new" && chmod 755 "${bin}/apg.new" && mv -f "${bin}/apg.new" "${bin}/apg" || return 1
  printf '%s' "${bin}"
}

# The task prompt, then one paragraph naming the exact site command the agent has; on a DDEV
# bed (APG_DDEV_PROJECT set) it is drush in the web container, reached through that command
# alone: a sandboxed agent has no ddev, docker or Docker socket (apg run brokers the site).
# A later turn (APG_TURN > 1) is the turn's prompt alone: the resumed session has the rest.
apg_prompt() {
  cat "${APG_PROMPT_FILE}"
  if [ "${APG_TURN:-1}" -gt 1 ] 2>/dev/null; then
    return 0
  fi
  # A campaign arm's instructions given with the prompt (arms.given, to: prompt).
  if [ -n "${APG_INSTRUCTIONS_FILE:-}" ]; then
    printf '\n\n'
    cat "${APG_INSTRUCTIONS_FILE}"
  fi
  printf '\n\nThe site command is `apg site` (on your PATH; it runs `%s` for the bed at %s).' \
    "${APG_SITE}" "${APG_APPROOT}"
  if [ -n "${APG_DDEV_PROJECT:-}" ]; then
    printf ' This is the DDEV project %s: `apg site ARGS` runs `drush ARGS` in its web container. Use it for every site command, not `ddev drush` or `docker` (inside the agent sandbox there are none).' \
      "${APG_DDEV_PROJECT}"
  fi
}

# Extra CLI arguments from one variable: a JSON array of strings, or shell words (shlex), never
# split on bare spaces. Writes them NUL-separated to the file $2; fails with a message on stderr.
apg_extra_args() {
  python3 -c '
import json, shlex, sys
name, raw = sys.argv[1], sys.argv[2].strip()
try:
    args = json.loads(raw) if raw.startswith("[") else shlex.split(raw)
except ValueError as exc:
    sys.exit(f"APG_USAGE {name}: {exc}; give a JSON array of strings or shell words")
if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
    sys.exit(f"APG_USAGE {name}: a JSON array must hold only strings")
sys.stdout.write("".join(a + "\0" for a in args))
' "$1" "${!1:-}" >"$2"
}
