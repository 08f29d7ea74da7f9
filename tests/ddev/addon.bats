#!/usr/bin/env bats
# `ddev add-on get` and `ddev add-on remove` on ddev/, with DDEV's rules for project files
# (DDEV's pkg/ddevapp addon code): a file is copied into .ddev/ unless one is there without the
# `#ddev-generated` marker (then it is the user's and is kept); remove deletes the files the
# add-on installed that still carry the marker and keeps the others. DDEV itself is not needed.

setup() {
  ADDON="$BATS_TEST_DIRNAME/../../ddev"
  PROJECT="$BATS_TEST_TMPDIR/project"
  mkdir -p "$PROJECT/.ddev"
}

project_files() {
  # The list under project_files: in install.yaml, one "  - path" per line.
  sed -n '/^project_files:/,/^[^ ]/s/^  - //p' "$ADDON/install.yaml"
}

addon_get() {
  local file
  while IFS= read -r file; do
    local dest="$PROJECT/.ddev/$file"
    if [ -e "$dest" ] && ! grep -q '#ddev-generated' "$dest"; then
      echo "NOT overwriting $dest: it has no #ddev-generated marker"
      continue
    fi
    mkdir -p "$(dirname "$dest")"
    cp "$ADDON/$file" "$dest"
    echo "$file" >> "$PROJECT/.ddev/.manifest"
  done < <(project_files)
}

addon_remove() {
  local file
  while IFS= read -r file; do
    local dest="$PROJECT/.ddev/$file"
    if [ -e "$dest" ] && grep -q '#ddev-generated' "$dest"; then
      rm "$dest"
    elif [ -e "$dest" ]; then
      echo "Unwilling to remove $dest: it has no #ddev-generated marker"
    fi
  done < <(sort -u "$PROJECT/.ddev/.manifest")
}

@test "install.yaml lists every file the add-on ships, and only those" {
  listed=$(project_files | sort)
  shipped=$(cd "$ADDON" && find commands agents -type f ! -name README.md | sort)
  [ "$listed" = "$shipped" ]
}

@test "every installed file carries the #ddev-generated marker" {
  run addon_get
  [ "$status" -eq 0 ]
  [[ "$output" != *"NOT overwriting"* ]]
  while IFS= read -r file; do
    grep -q '^#ddev-generated$' "$PROJECT/.ddev/$file"
  done < <(project_files)
}

@test "a second install overwrites the old files" {
  addon_get
  echo "# an old version" >> "$PROJECT/.ddev/commands/host/ai-eval-doctor"
  run addon_get
  [[ "$output" != *"NOT overwriting"* ]]
  cmp "$ADDON/commands/host/ai-eval-doctor" "$PROJECT/.ddev/commands/host/ai-eval-doctor"
}

@test "remove removes every installed file" {
  addon_get
  run addon_remove
  [ "$status" -eq 0 ]
  [[ "$output" != *"Unwilling"* ]]
  while IFS= read -r file; do
    [ ! -e "$PROJECT/.ddev/$file" ]
  done < <(project_files)
}

@test "a file the user took over (marker removed) is kept by get and remove" {
  addon_get
  sed -i '/^#ddev-generated$/d' "$PROJECT/.ddev/agents/nop"
  echo "# mine" >> "$PROJECT/.ddev/agents/nop"
  run addon_get
  [[ "$output" == *"NOT overwriting $PROJECT/.ddev/agents/nop"* ]]
  run addon_remove
  grep -q '# mine' "$PROJECT/.ddev/agents/nop"
}

@test "commands declare project types and Mutagen sync, and no Flags that hide their help" {
  for file in "$ADDON"/commands/host/ai-eval-*; do
    grep -q '^## ProjectTypes: drupal,drupal10,drupal11' "$file"
    grep -q '^## MutagenSync: true$' "$file"
    ! grep -q '^## Flags:' "$file"
  done
}

@test "ai-eval-verify takes the project name from DDEV_PROJECT, not from config.yaml" {
  ! grep -q 'config.yaml' "$ADDON/commands/host/ai-eval-verify"
  root="$BATS_TEST_TMPDIR/escrow"
  mkdir -p "$root/my-project/0123456789abcdef"
  printf 'import sys\nprint(" ".join(sys.argv[1:]))\n' > "$root/my-project/0123456789abcdef/escrow_verify.py"
  DDEV_APPROOT="$PROJECT" DDEV_PROJECT=my-project AI_PG_ESCROW_DIR="$root" AI_PG_ESCROW_PYTHON=python3 \
    run "$ADDON/commands/host/ai-eval-verify"
  [ "$status" -eq 0 ]
  [[ "$output" == *"--project my-project"* ]]
}
