"""What a confined agent may ask the site broker's drush for: site building yes, files and code no.

A DDEV web container can write the whole project, ``.ddev/commands/host/`` (run on the host,
unconfined) and ``.ddev/agents/`` included, and the sandbox that keeps the agent's own writes
inside its bed does not reach into that container. So the broker runs only commands that change
the site through Drupal's own APIs (config, entities, Views, modules, caches) or read it; a
command that writes files where it is told, runs PHP or SQL given to it, or replaces the site is
refused, and so is an option that names a file or loads code. Everything not in :data:`COMMANDS`
is refused too (fail closed). A refusal is ``APG_SITE_BROKER_REFUSED`` on the agent's stderr,
naming the command and how to allow it: the operator's ``AI_PG_SITE_ALLOW`` (command names,
aliases or option names, space or comma separated; ``all`` turns the policy off).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ai_proving_ground.errors import ApgError

REFUSED = "APG_SITE_BROKER_REFUSED"
ALLOW_ALL = "all"
CONTAINER_ROOT = "/var/www/html"  # where DDEV mounts the project in the web container


@dataclass(frozen=True)
class Rule:
    """One drush command: its aliases, whether the broker runs it by default, and why."""

    name: str
    aliases: tuple[str, ...]
    allowed: bool
    why: str
    path_arguments: bool = False  # its positional arguments are paths: inside the project only


_READS = "reads the site"
_DB = "changes the site through Drupal's APIs, in the database only"
COMMANDS: tuple[Rule, ...] = (
    Rule("core:status", ("status", "st"), True, _READS),
    Rule("pm:list", ("pml",), True, _READS),
    Rule("config:get", ("cget",), True, _READS),
    Rule("config:status", ("cst",), True, _READS),
    Rule("updatedb:status", ("updbst",), True, _READS),
    Rule("views:list", ("vl",), True, _READS),
    Rule("views:execute", ("vex",), True, _READS),
    Rule("views:analyze", ("va",), True, _READS),
    Rule("field:info", ("fi",), True, _READS),
    Rule("field:base-info", ("fbi",), True, _READS),
    Rule("watchdog:show", ("ws",), True, _READS),
    Rule("state:get", ("sget",), True, _READS),
    Rule("cache:rebuild", ("cr", "rebuild"), True, "rebuilds caches from what is stored"),
    Rule("config:set", ("cset",), True, _DB),
    Rule("config:delete", ("cdel",), True, _DB),
    Rule("config:import", ("cim",), True,
         "reads the sync directory, which the agent may write anyway, into the database"),
    Rule("config:export", ("cex",), True,
         "writes only the sync directory (config/sync), which the agent may write anyway and "
         "reset restores; --destination, which writes anywhere, is refused"),
    Rule("entity:save", ("esav",), True, _DB),
    Rule("entity:delete", ("edel",), True, _DB),
    Rule("entity:update", (), True, "apg's own: field values through the probe, in the database"),
    Rule("entity:create", (), True, "apg's own: a new entity through the probe, in the database"),
    Rule("views:enable", ("ven",), True, _DB),
    Rule("views:disable", ("vdis",), True, _DB),
    Rule("field:create", ("fc", "field-create"), True, _DB),
    Rule("field:delete", ("fd", "field-delete"), True, _DB),
    Rule("field:base-override-create", ("bfoc",), True, _DB),
    Rule("pm:install", ("en", "in", "install", "pm-install"), True,
         "installs a module already on disk (site building; its code is the project's)"),
    Rule("pm:uninstall", ("pmu", "un", "pm-uninstall"), True, _DB),
    Rule("theme:install", ("theme:enable", "thin", "then"), True, _DB),
    Rule("theme:uninstall", ("theme:un", "thun"), True, _DB),
    Rule("recipe", (), True, "applies a recipe from inside the project", path_arguments=True),
    Rule("php:eval", ("eval", "ev", "php-eval"), False,
         "runs PHP in the web container, which can write the whole project"),
    Rule("php:script", ("scr", "php-script"), False,
         "runs a PHP file in the web container, which can write the whole project"),
    Rule("php:cli", ("php", "core:cli", "core-cli"), False,
         "opens a PHP shell in the web container, which can write the whole project"),
    Rule("sql:dump", ("sql-dump",), False,
         "writes a database dump wherever --result-file names (the baseline's, once)"),
    Rule("sql:query", ("sqlq", "sql-query"), False,
         "runs any SQL given to it, and reads files (--file)"),
    Rule("sql:cli", ("sqlc", "sql-cli"), False, "runs any SQL on its input"),
    Rule("sql:drop", ("sql-drop",), False, "drops the whole database"),
    Rule("sql:create", ("sql-create",), False, "replaces the whole database"),
    Rule("sql:sync", ("sql-sync",), False, "copies a database between sites"),
    Rule("sql:sanitize", ("sqlsan", "sql-sanitize"), False, "rewrites the whole database"),
    Rule("sql:connect", ("sql-connect",), False, "prints the database credentials"),
    Rule("site:install", ("si", "sin", "site-install"), False,
         "replaces the site and writes settings.php"),
    Rule("core:rsync", ("rsync", "core-rsync"), False, "copies files between sites"),
    Rule("config:pull", ("cpull",), False, "copies configuration files between sites"),
    Rule("archive:dump", ("ard",), False, "writes an archive of code, files and database"),
    Rule("archive:restore", ("arr",), False, "replaces code, files and database from an archive"),
    Rule("updatedb", ("updb",), False, "runs the modules' update code"),
    Rule("deploy", (), False, "runs update code and imports configuration"),
    Rule("cron", ("core:cron", "core-cron"), False, "runs every module's hooks and queues"),
    Rule("generate", ("gen",), False, "writes PHP code into the project"),
    Rule("core:edit", ("conf", "config"), False, "edits files in an editor"),
)

# Options that name a file to write or read, or load code, whatever the command.
REFUSED_OPTIONS: dict[str, str] = {
    "--result-file": "writes a file where it names",
    "--destination": "writes files where it names",
    "--source": "reads files from where it names",
    "--file": "reads a file where it names",
    "--extra-dump": "passes options to mysqldump",
    "--include": "loads drush commands (code) from where it names",
    "--config": "loads drush configuration from where it names",
    "--alias-path": "loads site aliases from where it names",
    "--root": "points drush at another Drupal root",
    "-r": "points drush at another Drupal root",
    "--define": "overrides drush's configuration",
    "-D": "overrides drush's configuration",
}
# Options that may come before the command; anything else there is refused (fail closed).
LEADING_FLAGS = frozenset({"-y", "--yes", "-n", "--no", "--no-interaction", "-v", "-vv", "-vvv",
                           "--verbose", "-q", "--quiet", "--debug", "--no-ansi", "--ansi"})

_BY_NAME: dict[str, Rule] = {name: rule for rule in COMMANDS for name in (rule.name, *rule.aliases)}


def parse_allow(words: Iterable[str]) -> frozenset[str]:
    """The operator's allow-list: command names (an alias stands for its command) and options."""
    allowed: set[str] = set()
    for word in words:
        word = word.strip()
        if word:
            rule = _BY_NAME.get(word)
            allowed.add(rule.name if rule is not None else word.split("=", 1)[0])
    return frozenset(allowed)


def _refuse(what: str, why: str, allow: str) -> ApgError:
    return ApgError(REFUSED, f"{what} is refused by the site broker's policy ({why}); an "
                    f"operator who means it can allow it: AI_PG_SITE_ALLOW='{allow}'", exit_code=2)


def _outside(value: str) -> bool:
    """A path value that leaves the project: absolute elsewhere, or climbing with ``..``."""
    if ".." in value.replace("\\", "/").split("/"):
        return True
    if not value.startswith("/"):
        return False
    normal = posixpath.normpath(value)
    return normal != CONTAINER_ROOT and not normal.startswith(CONTAINER_ROOT + "/")


def check(args: Sequence[str], allow: frozenset[str]) -> None:
    """Raise :data:`REFUSED` unless the policy (plus ``allow``) lets drush run ``args``."""
    if ALLOW_ALL in allow:
        return
    position = 0
    while position < len(args) and args[position].startswith("-"):
        flag = args[position]
        if flag.split("=", 1)[0] not in LEADING_FLAGS | allow:
            raise _refuse(f"drush option {flag.split('=', 1)[0]} before the command",
                          "only -y, -v, -q and the like may come first; put options after "
                          "the command", flag.split("=", 1)[0])
        position += 1
    if position == len(args):
        raise ApgError("APG_USAGE", "apg drush needs a drush command, e.g. apg drush status",
                       exit_code=2)
    verb = args[position]
    if verb.startswith("@") and verb not in allow:
        raise _refuse(f"the site alias {verb}", "an alias reaches another site", verb)
    rule = _BY_NAME.get(verb)
    if rule is None and verb in allow:
        rule = Rule(verb, (), True, "allowed by the operator")
    if rule is None:
        raise _refuse(f"drush {verb}", "it is not in the broker's list of site-building "
                      "commands", verb)
    if not rule.allowed and rule.name not in allow:
        raise _refuse(f"drush {verb}", rule.why, rule.name)
    for arg in args[position + 1:]:
        _check_argument(rule, arg, allow)


def _check_argument(rule: Rule, arg: str, allow: frozenset[str]) -> None:
    if not arg.startswith("-"):
        if rule.path_arguments and _outside(arg) and rule.name not in allow:
            raise _refuse(f"drush {rule.name} {arg}", "a path outside the project", rule.name)
        return
    name, _, value = arg.partition("=")
    # Short options take their value bundled (-r/path): -r and -D are known by two characters.
    short = name[:2] if name[:2] in REFUSED_OPTIONS and not name.startswith("--") else name
    if short in allow:
        return
    if short in REFUSED_OPTIONS:
        raise _refuse(f"the option {short}", REFUSED_OPTIONS[short], short)
    if value and _outside(value):
        raise _refuse(f"the option {name}={value}", "a path outside the project", name)
