"""``apg completion bash|zsh``: shell completion for apg, enabled with one line.

    eval "$(apg completion bash)"     # in ~/.bashrc
    eval "$(apg completion zsh)"      # in ~/.zshrc

The script it prints asks ``apg __complete WORD LINE`` for candidates (WORD: the word being
completed as the shell split it; LINE: the command line up to the cursor): the command names, a
command's options and subcommands, read from its own ``--help`` so that completion never drifts
from the parsers, and the shell's file names for everything else.

Exit codes: 0 the script was printed; 2 usage (an unknown shell: APG_USAGE).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
import sys
from collections.abc import Mapping, Sequence

from ai_proving_ground.cli.common import ArgumentParser, run

_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
_CHOICES = re.compile(r"\{([^{}\s]+)\}")
# A subparser's entry in --help: "    name (alias, alias)   help".
_SUBCOMMAND = re.compile(r"^ {4}([\w:.-]+)(?: \(([^)]*)\))?(?: |$)", re.MULTILINE)

BASH = """\
# apg completion for bash: eval "$(apg completion bash)"
_apg_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(apg __complete "${COMP_WORDS[COMP_CWORD]}" "${COMP_LINE:0:COMP_POINT}" 2>/dev/null))
}
complete -o default -F _apg_complete apg
"""

ZSH = """\
# apg completion for zsh: eval "$(apg completion zsh)"
autoload -Uz bashcompinit && bashcompinit
""" + BASH


def _help_text(module: str, words: Sequence[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \
            contextlib.suppress(SystemExit):
        importlib.import_module(f"ai_proving_ground.cli.{module}").main([*words, "--help"])
    return out.getvalue()


def candidates(words: Sequence[str], commands: Mapping[str, str]) -> list[str]:
    """What may come after ``apg WORDS[:-1]`` and start with ``WORDS[-1]``; ``commands`` maps
    each command to its module under ai_proving_ground.cli."""
    *before, current = list(words) or [""]
    if not before:
        return _matching([*commands, "--help", "--version", "-V"], current)
    if before[0] not in commands:
        return []
    # The subcommand (e.g. `config:get` of `site`), if one is given; options are not.
    chain = [w for w in before[1:] if not w.startswith("-")][:1]
    text = _help_text(commands[before[0]], chain)
    # Options from the usage line and the options section only: a description that mentions
    # another command's option (run's help names `apg grade --run=`) offers nothing.
    usage, options = text.split("\n\n", 1)[0], text.partition("\noptions:\n")[2]
    found = set(_OPTION.findall(usage)) | set(_OPTION.findall(options))
    if not chain:
        for group in _CHOICES.findall(text.split("\n\n", 1)[0]):
            found.update(part for part in group.split(",") if part)
        positionals = text.partition("\npositional arguments:\n")[2].partition("\noptions:")[0]
        found.update(name for name, _ in _SUBCOMMAND.findall(positionals))
    return _matching(found, current)


def _matching(found: set[str] | Sequence[str], current: str) -> list[str]:
    # Options are offered once the word starts with "-"; before that, only names.
    return sorted(c for c in found if c.startswith(current) and (current.startswith("-")
                                                                 or not c.startswith("-")))


def _words(line: str) -> list[str]:
    try:
        words = shlex.split(line)
    except ValueError:  # an open quote: complete the words as they stand
        words = line.split()
    if not line or line[-1].isspace():
        words.append("")
    return words[1:]  # drop "apg"


def complete(argv: Sequence[str], commands: Mapping[str, str]) -> int:
    """``apg __complete WORD LINE``: one candidate per line on stdout, as the shell's WORD ends.

    The shell may split a word where apg does not (bash splits ``config:get`` at the colon):
    each candidate is given as the rest of the shell's word.
    """
    if len(argv) != 2:
        print("APG_USAGE apg __complete WORD LINE (the completion script calls it)", file=sys.stderr)
        return 2
    shell_word, line = argv
    words = _words(line)
    token = words[-1] if words else ""
    for candidate in candidates(words, commands):
        print(shell_word + candidate[len(token):] if token.endswith(shell_word) else candidate)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg completion", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shell", choices=["bash", "zsh"])
    args = parser.parse_args(argv)

    def act() -> int:
        sys.stdout.write(BASH if args.shell == "bash" else ZSH)
        return 0

    return run(act)
