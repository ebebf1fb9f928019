from apps.memories.chunking import chunk_markdown

CODE = "```python\n" + "\n".join(f"print({i})  # line {i}" for i in range(40)) + "\n```"
TABLE = "| key | value |\n|---|---|\n" + "\n".join(f"| k{i} | v{i} |" for i in range(40))


def _doc():
    intro = "Intro paragraph about the service. " * 10
    setup = "Install it with make. " * 20
    usage = "Call the API. " * 10
    return (
        f"# Guide\n\n{intro}\n\n## Setup\n\n{setup}\n\n{CODE}\n\n"
        f"## Usage\n\n{usage}\n\n{TABLE}\n\n## Notes\n\nShort note."
    )


def test_short_text_is_one_chunk():
    chunks = chunk_markdown("# Title\n\nshort", max_chars=500)
    assert [c.text for c in chunks] == ["# Title\n\nshort"]


def test_code_blocks_and_tables_are_never_split():
    chunks = chunk_markdown(_doc(), max_chars=600)
    assert len(chunks) > 3
    assert sum(CODE in c.text for c in chunks) == 1
    assert sum(TABLE in c.text for c in chunks) == 1
    for chunk in chunks:  # no chunk holds a dangling half of a fence
        assert chunk.text.count("```") % 2 == 0


def test_headings_stay_with_their_content():
    chunks = chunk_markdown(_doc(), max_chars=600)
    for chunk in chunks:
        lines = [line for line in chunk.text.splitlines() if line.strip()]
        assert not lines[-1].startswith("#"), f"heading left alone at the end: {chunk.text!r}"
    code_chunk = next(c for c in chunks if CODE in c.text)
    assert code_chunk.text.startswith("## Setup")
    assert code_chunk.title == "Guide > Setup"


def test_chunks_respect_the_size_limit_except_atomic_blocks():
    chunks = chunk_markdown(_doc(), max_chars=600)
    for chunk in chunks:
        if CODE not in chunk.text and TABLE not in chunk.text:
            assert len(chunk.text) <= 600
    text = " ".join(c.text for c in chunks)
    assert "Short note." in text and "Call the API." in text
