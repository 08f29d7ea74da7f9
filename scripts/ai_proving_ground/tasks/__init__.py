"""Tasks: datasets, the state checks that grade them, runs and grades."""
