"""Views of the web UI: thin, each resolves its object through apps.ui.access and calls one
service or selector."""
