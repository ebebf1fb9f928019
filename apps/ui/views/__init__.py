"""Views of the web UI: thin, each resolves its object through apps.ui.view_permissions and calls
one service or selector."""
