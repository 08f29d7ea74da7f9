"""The command line: thin wrappers that parse arguments and call the package."""
