"""The one exception of bad input, in a module that imports nothing: readers and the run planning
raise it before anything heavy (pandas) is imported."""


class PairingError(Exception):
    """Input that would make the figures wrong; the message says which file or task and what to do."""
