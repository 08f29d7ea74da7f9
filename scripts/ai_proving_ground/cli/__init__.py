"""The command line: thin wrappers that parse arguments, resolve `Settings` from them and the
environment once, and call the package."""
