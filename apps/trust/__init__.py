"""Trust checks on memory text: what is aimed at an assistant, hidden characters, credentials.

Functions over text, no database and no model of their own (the risk check's learned scorer is
dot products with 121 KB of weights, over the text's features and the sentence embedding its
caller hands over): the write path (apps.memories) calls them before anything is stored, with
the vector it stores, and the doors call `hidden.strip_hidden` before handing text to an
assistant.
"""
