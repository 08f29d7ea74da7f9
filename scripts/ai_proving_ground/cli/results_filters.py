"""The filters of a results listing, shared by ``apg results`` and ``apg results export``."""

from __future__ import annotations

import argparse

from ai_proving_ground.cli.common import positive_int
from ai_proving_ground.results.index import Filters, parse_since


def add_filters(parser: argparse.ArgumentParser) -> None:
    """The filters of a listing, shared by ``apg results`` and ``apg results export``."""
    parser.add_argument("--task", help="task ids matching this glob")
    parser.add_argument("--agent", help="this adapter only")
    parser.add_argument("--model", help="model ids matching this glob")
    parser.add_argument("--status", help="this run status only (attempted, timed_out, ...)")
    parser.add_argument("--verdict", help="this verdict only (pass, fail)")
    parser.add_argument("--since", type=parse_since, help="retrieved at or after this UTC time")
    parser.add_argument("--limit", type=positive_int, help="the newest N rows")


def filters_of(args: argparse.Namespace) -> Filters:
    return Filters(task=args.task, agent=args.agent, model=args.model, run_status=args.status,
                   verdict=args.verdict, since=args.since, limit=args.limit)
