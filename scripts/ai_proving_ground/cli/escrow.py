"""``apg escrow [fixture...] [--force]``: save the set's baseline and the verifier outside the project.

Writes ``${AI_PG_ESCROW_DIR:-~/.ai-proving-ground-escrow}/<project>/<set key>/``: the database dump,
the sidecars that exist (a missing one prints APG_ESCROW_SKIPPED), a git bundle of the baseline
tag, ``escrow.json`` (set key, sorted fixture names, baseline directory and ref as they are now,
every hash, the judging-tree hashes) and a copy of the verifier. Prints the set directory on
stdout: save it in the harness's own trusted state and run its verifier directly.
Escrow only from trusted, freshly installed or re-provisioned code, never to accept drift.
Exit codes: 0 written; 1 refused (APG_ESCROW_NO_BASELINE, APG_ESCROW_UNSAFE, APG_ESCROW_EXISTS,
APG_LOCK_BUSY); 2 usage (bad arguments, no site at the app root (APG_SITE_NOT_INSTALLED),
unknown fixture, bad project name).
"""

from __future__ import annotations

from collections.abc import Sequence

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.escrow.capture import escrow


def main(argv: Sequence[str] | None = None) -> int:
    parser = fixture_parser("apg escrow", __doc__)
    parser.add_argument("--force", action="store_true",
                        help="replace an existing escrow of this set")
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args, provisioned_default=False)
        print(escrow(target.approot, target.names, force=args.force, settings=target.settings))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
