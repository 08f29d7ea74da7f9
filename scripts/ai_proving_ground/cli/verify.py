"""``apg verify [fixture...] [--restore] [--escrow SET_DIR]``: check the bed against its escrow.

Runs the escrowed copy of the verifier (``python -I <set>/escrow_verify.py BED SET``). Without
``--escrow`` the set is chosen from escrow metadata: this bed, the sorted fixture names
(arguments, $AI_PG_FIXTURES, else kb_docs canvas_home) and $AI_PG_BASELINE_REF when set; not
exactly one match fails closed with APG_ESCROW_NONE. Baseline-file and tag differences print
APG_ESCROW_MISMATCH (``--restore`` repairs them: APG_ESCROW_RESTORED); judging-code changes print
APG_TAMPERED and always fail. Success ends with APG_ESCROW_OK <set key>. Grade only after that.
Exit codes: 0 verified; 1 mismatch, tampering or no single set; 2 usage,
unreadable escrow, or no site at the app root (APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.escrow.launch import verify


def main(argv: Sequence[str] | None = None) -> int:
    parser = fixture_parser("apg verify", __doc__)
    parser.add_argument("--restore", action="store_true",
                        help="rewrite differing baseline files and the tag from the escrow")
    parser.add_argument("--escrow", metavar="SET_DIR",
                        help="the escrow set directory that apg escrow printed")
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args, provisioned_default=False)
        set_dir = Path(args.escrow) if args.escrow else None
        return verify(target.approot, target.names, set_dir, restore=args.restore,
                      settings=target.settings)

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
