"""``python -m ai_proving_ground.bench``: run every benchmark and write build/bench.json."""

from ai_proving_ground.bench.run import main

raise SystemExit(main())
