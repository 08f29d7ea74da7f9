"""Task cards: what a task asks, its fixtures, its checks in words, its hidden verifier, its score."""
