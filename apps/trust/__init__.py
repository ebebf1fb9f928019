"""Trust checks on memory text: what is aimed at an assistant, hidden characters, credentials.

Pure functions over text, no models: the write path (apps.memories) calls them before anything is
stored, the doors call `hidden.strip_hidden` before handing text to an assistant.
"""
