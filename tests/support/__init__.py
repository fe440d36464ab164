"""What several test files (and the benches) share: fake APIs, scripted players, generated works, helpers.

Test modules import from here, never from each other or from conftest.py, so a test file can
move or be deleted without breaking another; conftest.py keeps the fixtures and imports its
helpers from here too. See tests/test_support_imports.py for the rule.
"""
