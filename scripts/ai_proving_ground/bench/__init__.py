"""Speed numbers, printed and written to build/bench.json: ``nox -s bench``, i.e.
``python -m ai_proving_ground.bench`` (`run.main`).

``fixture`` writes the bench's fixture of any size; ``run`` times the doctor, reset beside the
floor any reset must pay, and a view display; ``escrow`` times the escrow verifier beside
``sha256sum``; ``startup`` times whole ``apg`` processes; ``campaign`` times
campaign attempts (one job, and two beside one). Numbers, never assertions: the
machines are shared and noisy.
"""
