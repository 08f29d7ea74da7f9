"""Proving a task's graders: wrong builds derived from its reference by named mutations, graded."""
