"""Remem's conformance themes (``specwire.runtime.facts.conformance.theme_cases``) on every
built-in target."""

from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import theme_cases

globals().update(pytest_tests(theme_cases.CASES))
