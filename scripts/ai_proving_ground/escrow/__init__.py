"""Escrow: the baseline and judging-tree hashes held outside the bed, checked by a stdlib-only verifier.

``capture`` writes an escrow set (``files`` writes and swaps it atomically); ``locations`` says
where the escrow root, the project and the baseline are; ``judging`` names the judging tree;
``mounts`` refuses an escrow a container could write; ``verifier`` holds the verifier's
launcher (``verifier_file`` loads the verifier itself); ``launch`` runs the escrowed verifier
copy on a bed.
"""

NO_BASELINE = "APG_ESCROW_NO_BASELINE"
UNSAFE = "APG_ESCROW_UNSAFE"
EXISTS = "APG_ESCROW_EXISTS"
SKIPPED = "APG_ESCROW_SKIPPED"
TAG_MOVED = "APG_ESCROW_TAG_MOVED"
