"""``apg campaign validate SPEC [--words=LIST]``: the checks ``apg campaign run`` makes first.

Loads and resolves the spec as a run does (its schema, its dataset and tasks, its arms' skill
catalogs), then refuses a telltale word in anything the agents see: the prompts of the tasks it
runs, each arm's instructions and the names of the skills an arm installs (APG_TELLTALE_WORD,
file:line:col: $.path per finding; --words replaces the default list, as in apg dataset validate),
and a runbook entry (the dataset's ``runbook:`` or the spec's) that no task the campaign runs
covers (APG_RUNBOOK_UNCOVERED, file:line:col of each entry; a task covers what its ``covers:``
lists). ``apg campaign run`` and its --dry-run refuse the same spec the same way (default
list), before the runner's own checks.
Prints APG_CAMPAIGN_VALID. Exit codes: 0 valid; 2 usage, an invalid spec, a telltale word or an
uncovered runbook entry.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ai_proving_ground import runbook
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.cli.dataset import word_list
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings
from ai_proving_ground.telltale import DEFAULT_WORDS, check_campaign, refuse

if TYPE_CHECKING:
    from ai_proving_ground.campaigns.spec import Campaign


def check_spec(path: Path, settings: Settings, words: Sequence[str] = DEFAULT_WORDS) -> Campaign:
    """The spec at ``path`` resolved as a run resolves it, refused when anything its agents see
    holds a telltale word (APG_TELLTALE_WORD) or a runbook entry is covered by no task it runs
    (APG_RUNBOOK_UNCOVERED); ``apg campaign run`` and its --dry-run call it too."""
    # Lazy for start-up time: only a campaign command needs the spec loader.
    from ai_proving_ground.campaigns.spec import load_spec, resolve

    campaign = resolve(load_spec(path), settings)
    refuse(check_campaign(campaign, words))
    runbook.refuse(runbook.check_campaign(campaign.spec.doc, campaign.dataset.path,
                                          [task.id for task in campaign.tasks]))
    return campaign


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg campaign validate", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", metavar="SPEC", help="the campaign spec: a YAML path or a shipped name")
    parser.add_argument("--words", type=word_list, default=DEFAULT_WORDS,
                        help="telltale words, comma-separated (replaces the default list)")
    args = parser.parse_args(argv)

    def act() -> int:
        # Lazy for start-up time: only validating a campaign needs its spec loader.
        from ai_proving_ground.campaigns.spec import find_spec

        path = find_spec(args.spec).absolute()
        campaign = check_spec(path, Settings.from_environ(), args.words)
        say("APG_CAMPAIGN_VALID", f"{path}: {len(campaign.tasks)} task(s), "
            f"{len(campaign.spec.arms)} arm(s), no telltale word, no runbook entry uncovered")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
