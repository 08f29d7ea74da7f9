#!/usr/bin/env bats
# The DDEV host wrappers ai-eval-escrow and ai-eval-verify, run the way ddev runs them
# (DDEV_APPROOT set, cwd in the project), on a real provisioned bed. Needs apg on PATH.
# Run: bats tests/escrow/escrow_wrappers.bats

bats_require_minimum_version 1.5.0

setup_file() {
  export HOST_COMMANDS="$BATS_TEST_DIRNAME/../../ddev/commands/host"
  export TEMPLATE="$BATS_FILE_TMPDIR/template"
  env -u AI_PG_BASELINE_DIR -u AI_PG_BASELINE_REF -u AI_PG_FIXTURES apg bed init "$TEMPLATE" >/dev/null
  apg provision --approot "$TEMPLATE" 2>/dev/null
}

setup() {
  unset AI_PG_BASELINE_DIR AI_PG_BASELINE_REF AI_PG_FIXTURES AI_PG_APPROOT
  export DDEV_APPROOT="$BATS_TEST_TMPDIR/bed"
  cp -a "$TEMPLATE" "$DDEV_APPROOT"
  export AI_PG_ESCROW_DIR="$BATS_TEST_TMPDIR/escrow"
  # The bed is an embedded one standing in for a DDEV project: the wrappers' plumbing is under
  # test (DDEV_APPROOT, the escrow folder, the verifier copy), so keep its driver; the wrapper's
  # default (ddev) would look for its baselines outside the project, where a DDEV bed keeps them.
  export AI_PG_SITE_DRIVER=sqlite
  cd "$DDEV_APPROOT"
}

escrow_set() {
  run --separate-stderr "$HOST_COMMANDS/ai-eval-escrow" kb_docs canvas_home
  [ "$status" -eq 0 ]
  SET_DIR="$output"
}

@test "both wrappers carry the DDEV annotations" {
  for command in ai-eval-escrow ai-eval-verify; do
    [ -x "$HOST_COMMANDS/$command" ]
    grep -q '^## Description: ' "$HOST_COMMANDS/$command"
    grep -q "^## Usage: $command " "$HOST_COMMANDS/$command"
    grep -q '^## Example: "ddev ' "$HOST_COMMANDS/$command"
    # No ## Flags: with it DDEV parses the flags itself and the command's --help is unreachable.
    ! grep -q '^## Flags:' "$HOST_COMMANDS/$command"
  done
}

@test "escrow prints the set directory under the project's escrow folder" {
  escrow_set
  [ "$(dirname "$SET_DIR")" = "$AI_PG_ESCROW_DIR/bed" ]
  [ -f "$SET_DIR/escrow.json" ]
  [ -f "$SET_DIR/escrow_verify.py" ]
  [ -f "$SET_DIR/tag.bundle" ]
}

@test "a second escrow needs --force" {
  escrow_set
  run "$HOST_COMMANDS/ai-eval-escrow"
  [ "$status" -eq 1 ]
  [[ "$output" == *APG_ESCROW_EXISTS* ]]
  run "$HOST_COMMANDS/ai-eval-escrow" --force
  [ "$status" -eq 0 ]
}

@test "verify selects the set by fixture names and passes on a clean bed" {
  escrow_set
  run "$HOST_COMMANDS/ai-eval-verify" kb_docs canvas_home
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "APG_ESCROW_OK $(basename "$SET_DIR")" ]
  run "$HOST_COMMANDS/ai-eval-verify" "$SET_DIR"
  [ "$status" -eq 0 ]
}

@test "verify reports tampering, and --restore does not hide it" {
  escrow_set
  echo "# agent" >> recipes/apg_base/recipe.yml
  run "$HOST_COMMANDS/ai-eval-verify" --restore
  [ "$status" -eq 1 ]
  [[ "$output" == *"APG_TAMPERED recipes/apg_base/recipe.yml modified"* ]]
}

@test "verify --restore repairs a deleted dump and tag" {
  escrow_set
  key=$(basename "$SET_DIR")
  rm ".ai-proving-ground/db.$key.dump"
  git tag -d "apg-baseline-$key" >/dev/null
  run "$HOST_COMMANDS/ai-eval-verify"
  [ "$status" -eq 1 ]
  [[ "$output" == *"APG_ESCROW_MISMATCH db.$key.dump missing"* ]]
  [[ "$output" == *"APG_ESCROW_MISMATCH tag apg-baseline-$key deleted"* ]]
  run "$HOST_COMMANDS/ai-eval-verify" --restore
  [ "$status" -eq 0 ]
  [[ "$output" == *"APG_ESCROW_RESTORED tag apg-baseline-$key"* ]]
  run "$HOST_COMMANDS/ai-eval-verify"
  [ "$status" -eq 0 ]
}

@test "without an escrow, verify fails closed" {
  run "$HOST_COMMANDS/ai-eval-verify"
  [ "$status" -eq 1 ]
  [[ "$output" == *APG_ESCROW_NONE* ]]
}

@test "the escrowed launcher runs from anywhere with a trusted bash" {
  escrow_set
  cd /
  bash_bin=/usr/bin/bash
  [ -x "$bash_bin" ] || bash_bin=$(command -v bash)
  run "$bash_bin" "$SET_DIR/escrow-verify.sh" "$DDEV_APPROOT" "$SET_DIR"
  [ "$status" -eq 0 ]
  [ "$output" = "APG_ESCROW_OK $(basename "$SET_DIR")" ]
}

@test "a replaced wrapper in the bed is itself reported" {
  escrow_set
  mkdir -p .ddev/commands/host
  printf '#!/usr/bin/env bash\necho APG_ESCROW_OK\n' > .ddev/commands/host/ai-eval-verify
  run /usr/bin/env bash "$SET_DIR/escrow-verify.sh" "$DDEV_APPROOT" "$SET_DIR"
  [ "$status" -eq 1 ]
  [[ "$output" == *"APG_TAMPERED .ddev/commands/host/ai-eval-verify added"* ]]
}

@test "usage errors exit 2" {
  run "$HOST_COMMANDS/ai-eval-verify" --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *APG_USAGE* ]]
}
