"""Tooling that measures the product and is never part of it: retrieval evaluation, the
abstention check and the confidence fit, ablation runs, and the bench commands (`manage.py
evaluate`, `evaluate_validity`, `bench`, `ui_bench`, `stale_bench`, `export_bench`).

Code under apps/ never imports from here (tests/core/test_tooling_separate.py); the production
settings leave the app out.
"""
