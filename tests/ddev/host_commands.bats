#!/usr/bin/env bats
# The ai-eval-* host commands: each runs `apg <command>` for this DDEV project with the ddev
# driver, passes arguments through untouched and fails clearly without DDEV_APPROOT or apg.

setup() {
  COMMANDS="$BATS_TEST_DIRNAME/../../ddev/commands/host"
  STUB_DIR="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$STUB_DIR" "$BATS_TEST_TMPDIR/project"
  cat > "$STUB_DIR/apg" <<'STUB'
#!/usr/bin/env bash
printf '%s\n' "driver=$AI_PG_SITE_DRIVER" "cwd=$PWD" "$@"
exit "${STUB_EXIT:-0}"
STUB
  chmod +x "$STUB_DIR/apg"
  export PATH="$STUB_DIR:$PATH"
  export DDEV_APPROOT="$BATS_TEST_TMPDIR/project"
  unset AI_PG_SITE_DRIVER AI_PG_APG
}

@test "each command runs apg with the ddev driver in the app root" {
  for command in provision reset doctor run grade; do
    run "$COMMANDS/ai-eval-$command" first "two words" --run=x
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "driver=ddev" ]
    [ "${lines[1]}" = "cwd=$DDEV_APPROOT" ]
    [ "${lines[2]}" = "$command" ]
    [ "${lines[3]}" = "--approot" ]
    [ "${lines[4]}" = "$DDEV_APPROOT" ]
    [ "${lines[5]}" = "first" ]
    [ "${lines[6]}" = "two words" ]
    [ "${lines[7]}" = "--run=x" ]
  done
}

@test "apg's exit code comes through" {
  STUB_EXIT=3 run "$COMMANDS/ai-eval-grade" dv01_view_build
  [ "$status" -eq 3 ]
}

@test "an explicit driver choice is kept" {
  AI_PG_SITE_DRIVER=sqlite run "$COMMANDS/ai-eval-doctor"
  [ "${lines[0]}" = "driver=sqlite" ]
}

@test "without DDEV_APPROOT the command refuses with APG_USAGE" {
  unset DDEV_APPROOT
  run "$COMMANDS/ai-eval-provision"
  [ "$status" -eq 2 ]
  [[ "$output" == APG_USAGE* ]]
}

@test "a missing apg is named with the fix" {
  AI_PG_APG=/nonexistent/apg run "$COMMANDS/ai-eval-reset"
  [ "$status" -eq 2 ]
  [[ "$output" == APG_APG_MISSING* ]]
  [[ "$output" == *"pipx install"* ]]
}

@test "every command carries DDEV annotations and no CRLF" {
  for file in "$COMMANDS"/ai-eval-*; do
    grep -q '^## Description: ' "$file"
    grep -q '^## Usage: ai-eval-' "$file"
    ! grep -q $'\r' "$file"
  done
}
