"""HyperOffload: data movement across a memory hierarchy as part of the program."""

__version__ = "0.1.0"
