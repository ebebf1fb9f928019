"""Memory content rendered as markdown, safely: raw HTML is escaped by the parser and the output
is sanitised again (nh3), so no script, event handler or javascript: link reaches the page."""

from __future__ import annotations

import re

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "del",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}}
# A table column's alignment becomes a class (static/ui/app.css): the Content-Security-Policy
# refuses inline style attributes, which is what the parser writes.
_ALIGN = re.compile(r'style="text-align:(left|center|right)"')
ALIGN_CLASSES = {"align-left", "align-center", "align-right"}
CELL_CLASSES = {tag: {"class": ALIGN_CLASSES} for tag in ("th", "td")}


def render(text: str) -> str:
    html = _ALIGN.sub(r'class="align-\1"', _md.render(text or ""))
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        tag_attribute_values=CELL_CLASSES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
