"""The provider part of the conformance suite (``specwire.runtime.facts.conformance``) on every
built-in target (``conformance_harness.FACTORIES``), or on yours with
``pytest tests/conformance --provider package.module:factory``."""

from conformance_harness import pytest_tests

from specwire.runtime.facts.conformance import provider_cases

globals().update(pytest_tests(provider_cases.CASES))
