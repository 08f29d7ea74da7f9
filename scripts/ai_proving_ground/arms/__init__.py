"""Arms that change what the agent gets: skills and instructions installed into a run's HOME."""
