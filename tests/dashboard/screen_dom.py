"""What a table screen's page does with the push channel's messages, without a browser.

A small DOM (the standard library's HTML parser), the few selectors the updates use
(descendant combinators of ``tag.class`` compounds, first match in document order, as
``querySelector``) and the four operations of ``dashboard/static/screen.js``. A ``state``
message replaces the page's body; an ``update`` applies its operations — only onto the state
it was made from (``base``), as the page does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

VOID = {"img", "br", "hr", "input", "meta", "link", "source", "wbr"}


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)
    parent: Node | None = None

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def tree(self) -> tuple[Any, ...]:
        """Everything a page shows of this element: comparable with ``==``."""
        return (self.tag, tuple(sorted(self.attrs.items())),
                tuple(c if isinstance(c, str) else c.tree() for c in self.children))


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#fragment")
        self.open = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, parent=self.open)
        self.open.children.append(node)
        if tag not in VOID:
            self.open = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.open.children.append(Node(tag, {k: v or "" for k, v in attrs}, parent=self.open))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.open.tag == tag, f"</{tag}> closes <{self.open.tag}>"
        assert self.open.parent is not None
        self.open = self.open.parent

    def handle_data(self, data: str) -> None:
        self.open.children.append(data)


def parse(html: str) -> list[Node | str]:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert builder.open is builder.root, "unclosed element"
    return builder.root.children


def _matches(node: Node, compound: str) -> bool:
    tag, *classes = compound.split(".")
    return (not tag or node.tag == tag) and set(classes) <= node.classes()


def _elements(node: Node) -> list[Node]:
    out = []
    for child in node.children:
        if isinstance(child, Node):
            out.append(child)
            out += _elements(child)
    return out


def query(root: Node, selector: str) -> Node:
    """The first element under ``root`` that ``selector`` selects (as ``querySelector``)."""
    *ancestors, last = selector.split()
    for node in _elements(root):
        if not _matches(node, last):
            continue
        up, wanted = node.parent, list(ancestors)
        while wanted and up is not None and up is not root:
            if _matches(up, wanted[-1]):
                wanted.pop()
            up = up.parent
        if not wanted:
            return node
    raise AssertionError(f"nothing matches {selector!r}")


def _adopt(parent: Node, nodes: list[Node | str]) -> list[Node | str]:
    for n in nodes:
        if isinstance(n, Node):
            n.parent = parent
    return nodes


class ScreenPage:
    """The page's body (``#screen-body``) and the sequence number it shows."""

    def __init__(self) -> None:
        self.body = Node("div", {"id": "screen-body"})
        self.seq = -1

    def receive(self, message: dict[str, Any]) -> bool:
        """Apply one message; False when an update does not follow what is shown (the page
        then reconnects and gets the whole state)."""
        if message["type"] == "state":
            self.body.children = _adopt(self.body, parse(message["html"]))
        elif message["type"] == "update":
            if message["base"] != self.seq:
                return False
            for op in message["ops"]:
                self._apply(op)
        else:
            return True
        self.seq = message["seq"]
        return True

    def _apply(self, op: list[Any]) -> None:
        kind, selector, *args = op
        el = query(self.body, selector)
        if kind == "set":  # (this parser lower-cases names; a browser keeps SVG's viewBox)
            el.attrs.update({k.lower(): v for k, v in args[0].items()})
        elif kind == "inner":
            el.children = _adopt(el, parse(args[0]))
        elif kind == "outer":
            assert el.parent is not None
            at = el.parent.children.index(el)
            el.parent.children[at:at + 1] = _adopt(el.parent, parse(args[0]))
        elif kind == "tail":
            start, html = args
            assert all(isinstance(c, Node) for c in el.children)
            el.children = [*el.children[:start], *_adopt(el, parse(html))]
        else:
            raise AssertionError(f"unknown operation {kind!r}")

    def tree(self) -> tuple[Any, ...]:
        return self.body.tree()


def page_of(html: str) -> tuple[Any, ...]:
    """The tree of a page whose body holds ``html`` (what a fresh screen shows)."""
    page = ScreenPage()
    page.receive({"type": "state", "seq": 0, "html": html})
    return page.tree()
