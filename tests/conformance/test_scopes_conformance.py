"""Scopes, keyed facts and point reads (``specwire.runtime.facts.conformance.scope_cases``) on
every built-in target."""

from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import scope_cases

globals().update(pytest_tests(scope_cases.CASES))
