"""Trust checks on memory text: what is aimed at an assistant, hidden characters, credentials.

Functions over text, no database and no embedding model (the risk check's learned scorer is a
dot product with 128 KB of weights): the write path (apps.memories) calls them before anything
is stored, the doors call `hidden.strip_hidden` before handing text to an assistant.
"""
